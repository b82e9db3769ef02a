/**
 * `pincer doctor`: checks the setup and prints a checklist, one line per check
 * and, under each failure, what to do about it. The checks themselves live in
 * `checks.ts`; this file decides their order, what a failure makes pointless
 * to run, and how the lines look. Everything printed goes through the redactor.
 */
import { configuredSecrets } from '../app.js';
import type { Config } from '../config/schema.js';
import { createRedactor, type Redactor } from '../safety/secrets.js';
import {
  checkConfig,
  checkDataDir,
  checkDiscord,
  checkModelEndpoint,
  checkModelExists,
  checkSlack,
  checkStore,
  checkTelegram,
  checkToolCalls,
  type CheckResult,
  type CheckStatus,
} from './checks.js';
import { checkAccess, checkLeftoverWorkspace } from './access-checks.js';
import { checkMcpServers } from './mcp-checks.js';

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  /** Whether calls to the model that may cost money are made. */
  modelCalls: boolean;
  /** Where the checklist is written (default stdout). */
  out?: NodeJS.WritableStream;
  /** Where the configuration is read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** The mark in front of each line. */
export const STATUS_MARKS = { pass: '✓', fail: '✗', skip: '-', warn: '!' } as const satisfies Record<CheckStatus, string>;

/** Writes results as they come, and remembers whether any failed. */
class Checklist {
  failures = 0;

  constructor(
    private readonly out: NodeJS.WritableStream,
    public redactor: Redactor,
  ) {}

  add(...results: CheckResult[]): void {
    for (const result of results) this.write(result);
  }

  private write({ name, status, detail, fix }: CheckResult): void {
    if (status === 'fail') this.failures++;
    const shown = status === 'skip' ? `skipped${detail ? ` (${detail})` : ''}` : detail;
    let text = `${STATUS_MARKS[status]} ${name}${shown ? `: ${shown}` : ''}\n`;
    if (fix && (status === 'fail' || status === 'warn')) text += `    fix: ${fix}\n`;
    this.out.write(this.redactor.redact(text));
  }
}

/** Runs the checks; resolves to the exit code (non-zero when anything failed). */
export async function runDoctor(options: DoctorOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const list = new Checklist(out, createRedactor());
  const { results, config } = checkConfig(options.env);
  if (config) list.redactor = createRedactor(configuredSecrets(config));
  list.add(...results);
  if (config) {
    await checkModel(list, config, options.modelCalls);
    await checkChannels(list, config);
    list.add(...(await checkMcpServers(config)));
    // The folder first: opening the store tightens the folder's permissions.
    list.add(checkDataDir(config));
    list.add(await checkStore(config));
    // After the store: who may use each channel depends on the policy stored there.
    list.add(...(await checkAccess(config)));
    list.add(...(await checkLeftoverWorkspace(config)));
  } else {
    list.add({ name: 'everything else', status: 'skip', detail: 'the configuration must load first' });
  }
  out.write(list.failures ? `\n${list.failures} ${list.failures === 1 ? 'check' : 'checks'} failed.\n` : '\nAll checks passed.\n');
  return list.failures ? 1 : 0;
}

/** The endpoint, then the model, then tool calls: each is pointless when the one before failed. */
async function checkModel(list: Checklist, config: Config, modelCalls: boolean): Promise<void> {
  const endpoint = await checkModelEndpoint(config.llm);
  list.add(endpoint);
  if (endpoint.status === 'fail') {
    list.add({ name: 'model', status: 'skip', detail: 'the model endpoint did not answer' });
    list.add({ name: 'tool calls', status: 'skip', detail: 'the model endpoint did not answer' });
    return;
  }
  const model = await checkModelExists(config.llm);
  list.add(model);
  if (!modelCalls) list.add({ name: 'tool calls', status: 'skip', detail: '--no-model-calls' });
  else if (model.status === 'fail') list.add({ name: 'tool calls', status: 'skip', detail: 'the model was not found' });
  else list.add(await checkToolCalls(config.llm));
}

/** Each configured channel's token, checked at once. */
async function checkChannels(list: Checklist, config: Config): Promise<void> {
  const checks = [
    config.telegram.token ? checkTelegram(config.telegram) : undefined,
    config.discord.token ? checkDiscord(config.discord) : undefined,
    config.slack.botToken ? checkSlack(config.slack) : undefined,
  ].filter((check) => check !== undefined);
  if (checks.length === 0) {
    list.add({ name: 'channels', status: 'skip', detail: 'none configured: set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or SLACK_BOT_TOKEN' });
    return;
  }
  for (const results of await Promise.all(checks)) list.add(...results);
}
