/**
 * `pincer init`: sets pincer up in the working folder. Interactive in a
 * terminal (@clack/prompts): the model provider and its base URL, the key, the
 * model (checked with a call), the channels and their tokens (each checked),
 * the owners. It writes `.env` (mode 0600: the secrets) and
 * `config/pincer.yaml` (the rest), then offers to run `pincer doctor`.
 * With `--yes` it asks nothing and takes the flags.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as prompts from '@clack/prompts';
import YAML from 'yaml';
import { DiscordConfigSchema, LlmConfigSchema, SlackConfigSchema, TelegramConfigSchema } from '../config/schema.js';
import type { CheckResult } from './check-result.js';
import { checkDiscord, checkModelEndpoint, checkModelExists, checkSlack, checkTelegram } from './checks.js';

/** The providers `init` knows: their endpoint, whether they need a key, a model to suggest. */
export const PROVIDERS = {
  openai: { label: 'OpenAI', baseUrl: undefined, needsKey: true, model: 'gpt-4o-mini' },
  openrouter: { label: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1', needsKey: true, model: 'openai/gpt-4o-mini' },
  ollama: { label: 'Ollama (local)', baseUrl: 'http://127.0.0.1:11434/v1', needsKey: false, model: 'llama3.1' },
  llamacpp: { label: 'llama.cpp server (local)', baseUrl: 'http://127.0.0.1:8080/v1', needsKey: false, model: 'local-model' },
  other: { label: 'Other OpenAI-compatible endpoint', baseUrl: undefined, needsKey: false, model: '' },
} as const;
export type ProviderName = keyof typeof PROVIDERS;

/** The flags of `pincer init` (commander's names). */
export interface InitOptions {
  provider?: ProviderName;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  telegramToken?: string;
  discordToken?: string;
  slackBotToken?: string;
  slackAppToken?: string;
  owners?: string;
  yes?: boolean;
  /** False with `--no-check`. */
  check?: boolean;
  /** Where to write (default the working folder). */
  cwd?: string;
}

/** Everything `init` writes. */
export interface Setup {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model: string;
  telegramToken?: string | undefined;
  discordToken?: string | undefined;
  slackBotToken?: string | undefined;
  slackAppToken?: string | undefined;
  owners: string[];
}

/** Exit codes. */
const EXIT = { ok: 0, failed: 1, usage: 64 } as const;

const OWNER = /^(telegram|discord|slack|terminal):[\w.-]+$/;

/** Runs the setup; resolves to the exit code. */
export async function runInit(options: InitOptions): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const files = { env: join(cwd, '.env'), config: join(cwd, 'config', 'pincer.yaml') };
  const interactive = !options.yes && Boolean(process.stdin.isTTY && process.stdout.isTTY);
  if (!interactive && !options.yes) {
    process.stderr.write('pincer init: no terminal to ask in; run it with --yes and the flags (pincer init --help lists them).\n');
    return EXIT.usage;
  }
  const setup = interactive ? await ask(options, files) : fromFlags(options);
  if (typeof setup === 'number') return setup;
  if (options.check !== false) {
    const failures = (await checkSetup(setup)).filter((result) => result.status === 'fail');
    if (failures.length) {
      for (const failure of failures) process.stderr.write(`✗ ${failure.name}: ${failure.detail ?? ''}${failure.fix ? `\n    fix: ${failure.fix}` : ''}\n`);
      process.stderr.write('pincer init: nothing was written; fix the above or run with --no-check.\n');
      return EXIT.failed;
    }
  }
  write(setup, files);
  process.stdout.write(`Wrote ${files.env} (secrets, readable by you only) and ${files.config}.\n`);
  if (interactive) {
    const doctor = await prompts.confirm({ message: 'Run pincer doctor now to check everything?', initialValue: true });
    if (doctor === true) {
      const run = spawnSync(process.execPath, [process.argv[1]!, 'doctor'], { cwd, stdio: 'inherit' });
      return run.status ?? EXIT.failed;
    }
    prompts.outro('Start the bot with: npm start');
  }
  return EXIT.ok;
}

/** The setup from flags alone (`--yes`); missing values are listed with exit code 64. */
function fromFlags(options: InitOptions): Setup | number {
  const provider = options.provider ? PROVIDERS[options.provider] : undefined;
  const baseUrl = options.baseUrl ?? provider?.baseUrl;
  const model = options.model ?? (provider?.model || undefined);
  const missing = [
    ...(!options.provider && !options.baseUrl ? ['--provider (or --base-url)'] : []),
    ...(options.provider === 'other' && !options.baseUrl ? ['--base-url'] : []),
    ...(provider?.needsKey && !options.apiKey ? ['--api-key'] : []),
    ...(!model ? ['--model'] : []),
  ];
  const owners = splitOwners(options.owners);
  const badOwner = owners.find((owner) => !OWNER.test(owner));
  if (badOwner) missing.push(`--owners: "${badOwner}" is not platform:userId (telegram, discord, slack or terminal)`);
  if (missing.length) {
    process.stderr.write(`pincer init: missing or wrong: ${missing.join(', ')}.\n`);
    return EXIT.usage;
  }
  return { baseUrl, apiKey: options.apiKey, model: model!, telegramToken: options.telegramToken, discordToken: options.discordToken, slackBotToken: options.slackBotToken, slackAppToken: options.slackAppToken, owners };
}

/** The interactive questions; a cancel (Ctrl+C) ends with nothing written. */
async function ask(options: InitOptions, files: { env: string; config: string }): Promise<Setup | number> {
  prompts.intro('pincer setup');
  const cancelled = (): number => {
    prompts.cancel('Setup cancelled; nothing was written.');
    return EXIT.failed;
  };
  const existing = [files.env, files.config].filter((file) => existsSync(file));
  if (existing.length) {
    const overwrite = await prompts.confirm({ message: `${existing.join(' and ')} exist${existing.length === 1 ? 's' : ''}. Replace ${existing.length === 1 ? 'it' : 'them'}?`, initialValue: false });
    if (prompts.isCancel(overwrite) || !overwrite) return cancelled();
  }
  const provider = await prompts.select<ProviderName>({
    message: 'Which model provider?',
    options: (Object.keys(PROVIDERS) as ProviderName[]).map((value) => ({ value, label: PROVIDERS[value].label })),
    initialValue: options.provider ?? 'openai',
  });
  if (prompts.isCancel(provider)) return cancelled();
  const chosen = PROVIDERS[provider];
  let baseUrl: string | undefined = options.baseUrl ?? chosen.baseUrl;
  if (provider === 'other' || provider === 'ollama' || provider === 'llamacpp') {
    const answer = await prompts.text({ message: 'Base URL of the endpoint (ending in /v1)', initialValue: baseUrl ?? '', validate: (value) => (/^https?:\/\/\S+$/.test(value ?? '') ? undefined : 'an http(s) URL, e.g. http://127.0.0.1:11434/v1') });
    if (prompts.isCancel(answer)) return cancelled();
    baseUrl = answer;
  }
  let apiKey = options.apiKey;
  if (!apiKey && (chosen.needsKey || provider === 'other')) {
    const answer = await prompts.password({ message: chosen.needsKey ? 'API key' : 'API key (leave empty if the server needs none)', validate: (value) => (chosen.needsKey && !value ? 'the key is needed' : undefined) });
    if (prompts.isCancel(answer)) return cancelled();
    apiKey = answer || undefined;
  }
  const model = await prompts.text({ message: 'Model name', initialValue: options.model ?? chosen.model, validate: (value) => (value?.trim() ? undefined : 'the model name is needed') });
  if (prompts.isCancel(model)) return cancelled();
  const channels = await prompts.multiselect<'telegram' | 'discord' | 'slack'>({
    message: 'Channels (space to pick; none: chat in this terminal only)',
    options: [
      { value: 'telegram', label: 'Telegram' },
      { value: 'discord', label: 'Discord' },
      { value: 'slack', label: 'Slack (Socket Mode)' },
    ],
    required: false,
  });
  if (prompts.isCancel(channels)) return cancelled();
  const setup: Setup = { baseUrl, apiKey, model: model.trim(), owners: [] };
  for (const channel of channels) {
    const token = await prompts.password({ message: { telegram: 'Telegram bot token (from @BotFather)', discord: 'Discord bot token', slack: 'Slack bot token (xoxb-...)' }[channel], validate: (value) => (value ? undefined : 'the token is needed') });
    if (prompts.isCancel(token)) return cancelled();
    if (channel === 'telegram') setup.telegramToken = token;
    if (channel === 'discord') setup.discordToken = token;
    if (channel === 'slack') {
      setup.slackBotToken = token;
      const app = await prompts.password({ message: 'Slack app-level token for Socket Mode (xapp-...)', validate: (value) => (value ? undefined : 'the token is needed') });
      if (prompts.isCancel(app)) return cancelled();
      setup.slackAppToken = app;
    }
  }
  const owners = await prompts.text({
    message: 'Owners, comma-separated as platform:userId (e.g. telegram:123456, discord:1234..., slack:U01...; the terminal user is always an owner)',
    initialValue: options.owners ?? '',
    validate: (value) => splitOwners(value).find((owner) => !OWNER.test(owner)) && 'each owner as platform:userId, e.g. telegram:123456',
  });
  if (prompts.isCancel(owners)) return cancelled();
  setup.owners = splitOwners(owners);
  return setup;
}

/** The model and every token given, checked as `pincer doctor` checks them. */
async function checkSetup(setup: Setup): Promise<CheckResult[]> {
  const llm = LlmConfigSchema.parse({ baseUrl: setup.baseUrl, apiKey: setup.apiKey, model: setup.model, maxRetries: 0 });
  const results: CheckResult[] = [await checkModelEndpoint(llm)];
  if (results[0]!.status !== 'fail') results.push(await checkModelExists(llm));
  const channels = await Promise.all([
    setup.telegramToken ? checkTelegram(TelegramConfigSchema.parse({ token: setup.telegramToken, ...(process.env.TELEGRAM_API_ROOT ? { apiRoot: process.env.TELEGRAM_API_ROOT } : {}) })) : [],
    setup.discordToken ? checkDiscord(DiscordConfigSchema.parse({ token: setup.discordToken, ...(process.env.DISCORD_API_URL ? { apiUrl: process.env.DISCORD_API_URL } : {}) })) : [],
    setup.slackBotToken ? checkSlack(SlackConfigSchema.parse({ botToken: setup.slackBotToken, appToken: setup.slackAppToken, ...(process.env.SLACK_API_URL ? { apiUrl: process.env.SLACK_API_URL } : {}) })) : [],
  ]);
  return [...results, ...channels.flat()];
}

/** Writes `.env` (0600, the secrets and the model settings) and `config/pincer.yaml` (the rest). */
function write(setup: Setup, files: { env: string; config: string }): void {
  const env: Array<[string, string | undefined]> = [
    ['OPENAI_BASE_URL', setup.baseUrl],
    ['OPENAI_API_KEY', setup.apiKey],
    ['PINCER_MODEL', setup.model],
    ['TELEGRAM_BOT_TOKEN', setup.telegramToken],
    ['DISCORD_BOT_TOKEN', setup.discordToken],
    ['SLACK_BOT_TOKEN', setup.slackBotToken],
    ['SLACK_APP_TOKEN', setup.slackAppToken],
  ];
  const lines = ['# Written by pincer init. Secrets live here, not in config/pincer.yaml; the environment wins over this file.'];
  for (const [key, value] of env) if (value) lines.push(`${key}=${quoteEnv(value)}`);
  writeFileSync(files.env, `${lines.join('\n')}\n`, { mode: 0o600 });
  // An existing file keeps its mode when rewritten: tighten it.
  chmodSync(files.env, 0o600);
  mkdirSync(dirname(files.config), { recursive: true });
  const yaml = YAML.stringify({ owners: setup.owners });
  writeFileSync(files.config, `# Written by pincer init; every key is described in config/pincer.example.yaml.\n${yaml}`);
}

function splitOwners(text: string | undefined): string[] {
  return (text ?? '').split(',').map((owner) => owner.trim()).filter(Boolean);
}

/** A value for `.env`: quoted when it holds anything but plain characters. */
function quoteEnv(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : JSON.stringify(value);
}
