/**
 * `pincer doctor` as a user runs it: the built program, configured through the
 * environment, against the local fakes. Every URL is on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmEntry } from '../fakes/llm/server.js';
import { MANIFEST_SCOPES, startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { closedPort } from '../support/ports.js';
import { ensureBuilt, MAIN } from '../e2e/build.js';
import { baseEnv, cleanUp, tempDir } from '../e2e/pincer.js';
import { Store } from '../../src/store/store.js';
import { createPolicyStore } from '../../src/tools/policy.js';
import { fakeTool, memoryAudit } from '../tools/support.js';

const API_KEY = 'sk-doctor-test-key-0123456789abcdef';
const MESSAGE_CONTENT_INTENT = 1 << 15;

/** What one run printed and how it ended. */
interface DoctorRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The checklist's lines, without the summary. */
  lines: string[];
}

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
let discord: FakeDiscord | undefined;
let slack: FakeSlack | undefined;

beforeAll(() => ensureBuilt(), 130_000);
afterEach(async () => {
  await cleanUp();
  await Promise.all([llm?.close(), telegram?.close(), discord?.close(), slack?.close()]);
  llm = telegram = discord = slack = undefined;
});

/** Runs `node dist/main.js doctor ...args` in an empty folder with `env` and nothing else of ours. */
async function doctor(env: Record<string, string>, args: string[] = []): Promise<DoctorRun> {
  const child = spawn(process.execPath, [MAIN, 'doctor', ...args], {
    cwd: tempDir('pincer-doctor-cwd-'),
    env: { ...baseEnv(tempDir('pincer-doctor-data-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const lines = stdout.split('\n').filter((line) => /^[✓✗!-] /.test(line));
  return { code, stdout, stderr, lines };
}

/** A model that calls whichever tool it is offered. */
const callsTheTool = (request: { tools?: Array<{ function: { name: string } }> }): FakeLlmEntry => {
  const name = request.tools?.[0]?.function.name;
  return name ? toolCallReply([{ name, arguments: {} }]) : textReply('no tools here');
};

async function startModel(options: { models?: string[] | null } = {}): Promise<FakeLlm> {
  llm = await startFakeLlm({ responder: callsTheTool, apiKey: API_KEY, ...options });
  return llm;
}

function llmEnv(model: FakeLlm): Record<string, string> {
  return { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: API_KEY, PINCER_MODEL: 'fake-model' };
}

/** The names of the checks that failed. */
function failuresOf(done: DoctorRun): string[] {
  return done.lines.filter((line) => line.startsWith('✗ ')).map((line) => line.slice(2, line.indexOf(':')));
}

/** The line of the check `name` (its mark, name and detail), with the fix line under it when there is one. */
function lineOf(run: DoctorRun, name: string): string {
  const all = run.stdout.split('\n');
  const at = all.findIndex((line) => line.slice(2).startsWith(`${name}:`));
  if (at < 0) throw new Error(`no line for "${name}" in:\n${run.stdout}\n${run.stderr}`);
  return all[at + 1]?.startsWith('    fix: ') ? `${all[at]}\n${all[at + 1]}` : all[at]!;
}

/** A config file holding `yaml`. */
function configFile(yaml: string): string {
  const file = join(tempDir('pincer-doctor-config-'), 'pincer.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** Stores the global policy `mode` for `tools` in the store of `dataDir`, as an owner's /policy in a DM does. */
async function setGlobalPolicy(dataDir: string, tools: string[], mode: 'ask' | 'disable'): Promise<void> {
  const store = await Store.open({ dataDir });
  const policy = createPolicyStore({ store, catalog: { get: (name) => ({ tool: fakeTool({ name }) }), names: () => [] }, audit: memoryAudit() });
  for (const tool of tools) expect(await policy.set(tool, 'global', mode, 'telegram:1')).toEqual({ ok: true });
  await store.close();
}

describe('pincer doctor', () => {
  it('passes every check of a working setup and exits 0', async () => {
    const model = await startModel();
    telegram = await startFakeTelegram();
    discord = await startFakeDiscord({ token: 'discord-doctor-token.abcdefghijklmnop' });
    slack = await startFakeSlack();
    // Closed channels: only the listed users (and the owners) may use them.
    const closed = configFile('telegram:\n  allowedUsers: [42]\ndiscord:\n  allowedUsers: ["123456789012345678"]\nslack:\n  allowedUsers: [U01ABCDEF]\n');
    const run = await doctor({
      PINCER_CONFIG: closed,
      ...llmEnv(model),
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_API_URL: slack.apiUrl,
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const names = run.lines.map((line) => line.slice(2, line.indexOf(':')));
    expect(names).toEqual([
      'configuration',
      'model endpoint',
      'model',
      'tool calls',
      'telegram token',
      'discord token',
      'discord message content intent',
      'slack token',
      'slack scopes',
      'slack app token',
      'data folder',
      'store',
      'telegram access',
      'discord access',
      'slack access',
    ]);
    for (const line of run.lines) expect(line).toMatch(/^✓ /);
    expect(run.stdout).toContain('All checks passed.');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.tools?.[0]?.function.name).toBe('get_time');
    for (const secret of [API_KEY, telegram.token, discord.token, slack.botToken, slack.appToken]) expect(run.stdout).not.toContain(secret);
  });

  it('reports a refused API key with the variable to set, without printing the key', async () => {
    const model = await startModel();
    const wrongKey = 'sk-wrong-key-0123456789abcdefghijkl';
    const run = await doctor({ ...llmEnv(model), OPENAI_API_KEY: wrongKey });
    expect(run.code).toBe(1);
    expect(lineOf(run, 'model endpoint')).toMatch(/^✗ model endpoint: the API key was refused \(401\)\n {4}fix: .*OPENAI_API_KEY/);
    expect(lineOf(run, 'tool calls')).toMatch(/^- tool calls: skipped/);
    expect(run.stdout).not.toContain(wrongKey);
  });

  it('reports a base URL without /v1', async () => {
    const model = await startModel();
    const run = await doctor({ ...llmEnv(model), OPENAI_BASE_URL: model.url.replace(/\/v1$/, '') });
    expect(run.code).toBe(1);
    expect(lineOf(run, 'model endpoint')).toMatch(/^✗ model endpoint: .*\(404\)\n {4}fix: check that OPENAI_BASE_URL ends in \/v1/);
    expect(model.served).toBe(0);
  });

  it('names the URL when nothing listens there', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const run = await doctor({ OPENAI_BASE_URL: url, PINCER_MODEL: 'fake-model' });
    expect(run.code).toBe(1);
    expect(lineOf(run, 'model endpoint')).toContain(`✗ model endpoint: cannot connect to ${url} (connection refused)`);
  });

  it('reports a model the endpoint does not list, naming the ones it does', async () => {
    const model = await startModel({ models: ['fake-model', 'other-model'] });
    const run = await doctor({ ...llmEnv(model), PINCER_MODEL: 'no-such-model' });
    expect(run.code).toBe(1);
    expect(lineOf(run, 'model')).toMatch(/^✗ model: no-such-model is not among .*\n {4}fix: set PINCER_MODEL .*fake-model, other-model/);
    expect(model.served).toBe(0);
  });

  it('skips the model check against a server with no model list', async () => {
    const model = await startModel({ models: null });
    const run = await doctor(llmEnv(model), ['--no-model-calls']);
    expect(run.code, run.stdout).toBe(0);
    expect(lineOf(run, 'model endpoint')).toMatch(/^✓ model endpoint: .*no model list/);
    expect(lineOf(run, 'model')).toMatch(/^- model: skipped \(.*no model list/);
  });

  it('makes no chat completion with --no-model-calls', async () => {
    const model = await startModel();
    const run = await doctor(llmEnv(model), ['--no-model-calls']);
    expect(run.code, run.stdout).toBe(0);
    expect(lineOf(run, 'tool calls')).toBe('- tool calls: skipped (--no-model-calls)');
    expect(model.served).toBe(0);
  });

  it('reports a model that answers in text instead of calling the tool', async () => {
    llm = await startFakeLlm({ responder: () => textReply('It is noon.'), apiKey: API_KEY });
    const run = await doctor(llmEnv(llm));
    expect(run.code).toBe(1);
    expect(lineOf(run, 'tool calls')).toMatch(/^✗ tool calls: .*answered in text.*\n {4}fix: use a model that supports tool/);
  });

  it('reports a Telegram token the Bot API refuses', async () => {
    const model = await startModel();
    telegram = await startFakeTelegram();
    const badToken = '123456:AAwrong-token-for-the-doctor-test-0000';
    const run = await doctor({ ...llmEnv(model), TELEGRAM_BOT_TOKEN: badToken, TELEGRAM_API_ROOT: telegram.apiRoot }, ['--no-model-calls']);
    expect(run.code).toBe(1);
    expect(lineOf(run, 'telegram token')).toMatch(/^✗ telegram token: Telegram refused the token \(401\)\n {4}fix: set TELEGRAM_BOT_TOKEN/);
    expect(run.stdout).not.toContain(badToken);
  });

  it('reports a Discord token refused, and a missing Message Content intent', async () => {
    const model = await startModel();
    discord = await startFakeDiscord({ token: 'discord-doctor-token.abcdefghijklmnop', disallowedIntents: MESSAGE_CONTENT_INTENT });
    const env = { ...llmEnv(model), DISCORD_API_URL: discord.apiUrl };
    const refused = await doctor({ ...env, DISCORD_BOT_TOKEN: 'not-the-token' }, ['--no-model-calls']);
    expect(refused.code).toBe(1);
    expect(lineOf(refused, 'discord token')).toMatch(/^✗ discord token: Discord refused the token \(401\)\n {4}fix: .*Reset Token/);
    const noIntent = await doctor({ ...env, DISCORD_BOT_TOKEN: discord.token }, ['--no-model-calls']);
    expect(noIntent.code).toBe(1);
    expect(lineOf(noIntent, 'discord token')).toMatch(/^✓ /);
    expect(lineOf(noIntent, 'discord message content intent')).toMatch(/^✗ .*\n {4}fix: .*MESSAGE CONTENT INTENT/);
  });

  it('reports a refused Slack token and missing scopes', async () => {
    const model = await startModel();
    slack = await startFakeSlack({ scopes: MANIFEST_SCOPES.filter((scope) => scope !== 'im:history' && scope !== 'commands') });
    const env = { ...llmEnv(model), SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl };
    const refused = await doctor({ ...env, SLACK_BOT_TOKEN: 'xoxb-not-the-right-token' }, ['--no-model-calls']);
    expect(refused.code).toBe(1);
    expect(lineOf(refused, 'slack token')).toMatch(/^✗ slack token: Slack refused the token \(invalid_auth\)\n {4}fix: set SLACK_BOT_TOKEN/);
    const scopes = await doctor({ ...env, SLACK_BOT_TOKEN: slack.botToken }, ['--no-model-calls']);
    expect(scopes.code).toBe(1);
    expect(lineOf(scopes, 'slack scopes')).toMatch(/^✗ slack scopes: missing im:history, commands\n {4}fix: add them under OAuth & Permissions/);
  });

  it('warns, without failing, when the Slack app lacks the scopes of files', async () => {
    const model = await startModel();
    slack = await startFakeSlack({ scopes: MANIFEST_SCOPES.filter((scope) => !scope.startsWith('files:')) });
    const result = await doctor({ ...llmEnv(model), SLACK_APP_TOKEN: slack.appToken, SLACK_API_URL: slack.apiUrl, SLACK_BOT_TOKEN: slack.botToken }, ['--no-model-calls']);
    expect(lineOf(result, 'slack scopes')).toMatch(/^! slack scopes: missing files:read \(files people attach cannot be downloaded\), files:write \(files_send cannot share files\)\n {4}fix: add them/);
  });

  it('reports a Slack app token that is wrong, or is the bot token, with where to create the right one', async () => {
    const model = await startModel();
    slack = await startFakeSlack();
    const env = { ...llmEnv(model), SLACK_BOT_TOKEN: slack.botToken, SLACK_API_URL: slack.apiUrl };
    const wrong = await doctor({ ...env, SLACK_APP_TOKEN: 'xapp-not-the-right-token' }, ['--no-model-calls']);
    expect(wrong.code).toBe(1);
    expect(lineOf(wrong, 'slack token')).toMatch(/^✓ /);
    expect(lineOf(wrong, 'slack app token')).toMatch(/^✗ slack app token: Slack refused the app token \(invalid_auth\)\n {4}fix: create one under Basic Information, App-Level Tokens/);
    const swapped = await doctor({ ...env, SLACK_APP_TOKEN: slack.botToken }, ['--no-model-calls']);
    expect(lineOf(swapped, 'slack app token')).toMatch(/^✗ slack app token: SLACK_APP_TOKEN is not an app-level token/);
    for (const run of [wrong, swapped]) expect(run.stdout).not.toContain(slack.botToken);
  });

  it('reports every configuration problem and runs nothing else', async () => {
    const model = await startModel();
    const run = await doctor({ ...llmEnv(model), OPENAI_BASE_URL: 'localhost:1234/v1', PINCER_STORE_URL: 'ftp://nowhere' });
    expect(run.code).toBe(1);
    const failures = run.lines.filter((line) => line.startsWith('✗ configuration: '));
    expect(failures).toHaveLength(2);
    expect(run.stdout).toContain('llm.baseUrl (OPENAI_BASE_URL)');
    expect(run.stdout).toContain('storeUrl (PINCER_STORE_URL)');
    expect(model.served).toBe(0);
  });

  it('shows a retired config key as a warning, not a failure', async () => {
    const model = await startModel();
    const file = join(tempDir('pincer-doctor-config-'), 'pincer.yaml');
    writeFileSync(file, 'agent:\n  maxIterations: 5\n');
    const run = await doctor({ ...llmEnv(model), PINCER_CONFIG: file }, ['--no-model-calls']);
    expect(run.code, run.stdout).toBe(0);
    expect(lineOf(run, 'configuration')).toBe(`✓ configuration: loaded from ${file} and the environment`);
    expect(run.lines).toContainEqual(expect.stringMatching(/^! configuration: config key agent\.maxIterations has no effect/));
  });

  it('reports a data folder readable by other users', async () => {
    const model = await startModel();
    const dataDir = tempDir('pincer-doctor-open-');
    chmodSync(dataDir, 0o755);
    const run = await doctor({ ...llmEnv(model), PINCER_DATA_DIR: dataDir }, ['--no-model-calls']);
    expect(run.code).toBe(1);
    expect(lineOf(run, 'data folder')).toMatch(/^✗ data folder: .*readable by other users \(mode 755\).*\n {4}fix: .*chmod 700/);
    expect(lineOf(run, 'store')).toMatch(/^✓ store: /);
  });

  it('reports a store it cannot write to', async () => {
    const model = await startModel();
    const dataDir = tempDir('pincer-doctor-store-');
    // A folder where the database file should be: SQLite cannot open it.
    writeFileSync(join(dataDir, 'not-a-folder'), '');
    const run = await doctor({ ...llmEnv(model), PINCER_DATA_DIR: dataDir, PINCER_STORE_URL: `sqlite://${join(dataDir, 'not-a-folder', 'db.sqlite')}` }, ['--no-model-calls']);
    expect(run.code).toBe(1);
    expect(lineOf(run, 'store')).toMatch(/^✗ store: cannot open .*\n {4}fix: /);
  });

  it('fails for a channel open to everyone where the shell runs without an ask policy; warns once the policy asks', async () => {
    const model = await startModel();
    telegram = await startFakeTelegram();
    const dataDir = tempDir('pincer-doctor-open-');
    const env = { ...llmEnv(model), TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, PINCER_DATA_DIR: dataDir };
    const withShell = configFile('tools:\n  shell:\n    enabled: true\n');

    const open = await doctor({ ...env, PINCER_CONFIG: withShell }, ['--no-model-calls']);
    expect(open.code).toBe(1);
    expect(lineOf(open, 'telegram access')).toMatch(
      /^✗ telegram access: telegram admits everyone: telegram\.allowedUsers is empty.*anyone there may approve shell and files_write for themselves: no admin policy asks\n {4}fix: list who may use it in telegram\.allowedUsers.*\/policy ask shell and \/policy ask files_write/,
    );
    expect(failuresOf(open)).toEqual(['telegram access']);

    await setGlobalPolicy(dataDir, ['shell'], 'ask');
    const shellAsks = await doctor({ ...env, PINCER_CONFIG: withShell }, ['--no-model-calls']);
    expect(shellAsks.code).toBe(1);
    expect(lineOf(shellAsks, 'telegram access')).toMatch(/^✗ .*may approve files_write for themselves/);

    await setGlobalPolicy(dataDir, ['files_write'], 'ask');
    const asks = await doctor({ ...env, PINCER_CONFIG: withShell }, ['--no-model-calls']);
    expect(lineOf(asks, 'telegram access')).toMatch(/^! telegram access: telegram admits everyone: telegram\.allowedUsers is empty.*\n {4}fix: list who may use it/);
    expect(asks.code, asks.stdout).toBe(0);

    const closed = await doctor({ ...env, PINCER_CONFIG: configFile(`tools:\n  shell:\n    enabled: true\ntelegram:\n  allowedUsers: [42]\n`) }, ['--no-model-calls']);
    expect(lineOf(closed, 'telegram access')).toBe('✓ telegram access: only the 1 listed user and the owners');
  }, 60_000);

  it('starts each MCP server and counts its tools; one that cannot start fails with the fix', async () => {
    const model = await startModel();
    const file = join(tempDir('pincer-doctor-mcp-'), 'pincer.yaml');
    const everything = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    writeFileSync(
      file,
      `mcp:\n  servers:\n    everything:\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(everything)}, stdio]\n    broken:\n      command: ${JSON.stringify(process.execPath)}\n      args: ["-e", "process.exit(2)"]\n      startTimeoutMs: 3000\n`,
    );
    const run = await doctor({ ...llmEnv(model), PINCER_CONFIG: file }, ['--no-model-calls']);
    expect(lineOf(run, 'MCP server everything')).toMatch(/^✓ MCP server everything: \d+ tools over stdio$/);
    expect(lineOf(run, 'MCP server broken')).toMatch(/^✗ MCP server broken: did not start \(stdio\): .*\n {4}fix: check that `.*` runs from this folder with its args/);
    expect(run.code).toBe(1);
  }, 30_000);
});

