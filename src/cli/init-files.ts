/**
 * The two files `pincer init` writes: `.env` (the secrets, the endpoint, the
 * model, the owners and the platforms' API addresses, as the environment
 * variables the bot reads) and
 * `config/pincer.yaml` (the settings that are not secret). Both are checked
 * against the config schema before anything is written.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseEnv } from 'node:util';
import { stringify as stringifyYaml } from 'yaml';
import { ownerIdsOn } from '../channels/access.js';
import { ENV_KEYS, parseConfig } from '../config/load.js';
import { PRIVATE_FILE_MODE } from '../store/private-files.js';
import type { InitAnswers } from './init-answers.js';

/** Where init writes, relative to the working folder (the bot reads both from there). */
export const SETUP_FILES = { env: '.env', config: join('config', 'pincer.yaml') } as const;

/** The environment variable the bot reads for a config key (`llm.apiKey` → `OPENAI_API_KEY`). */
function envName(key: string): string {
  const entry = Object.entries(ENV_KEYS).find(([, configKey]) => configKey === key);
  if (!entry) throw new Error(`no environment variable for ${key}`);
  return entry[0];
}

/** The variables init owns in `.env`, each with the answer it holds. */
const MANAGED = [
  ['llm.apiKey', (answers) => answers.apiKey],
  ['llm.baseUrl', (answers) => answers.baseUrl],
  ['llm.model', (answers) => answers.model],
  ['telegram.token', (answers) => answers.telegramToken],
  ['discord.token', (answers) => answers.discordToken],
  ['slack.botToken', (answers) => answers.slackBotToken],
  ['slack.appToken', (answers) => answers.slackAppToken],
  ['telegram.apiRoot', (answers) => answers.telegramApiRoot],
  ['discord.apiUrl', (answers) => answers.discordApiUrl],
  ['slack.apiUrl', (answers) => answers.slackApiUrl],
  ['owners', (answers) => (answers.owners.length ? answers.owners.join(',') : undefined)],
] as const satisfies ReadonlyArray<readonly [string, (answers: InitAnswers) => string | undefined]>;

/** The names of the variables init writes (and replaces) in `.env`. */
export const MANAGED_ENV_NAMES: readonly string[] = MANAGED.map(([key]) => envName(key));

/** The variables to write, in order, without the unset ones. */
export function envValues(answers: InitAnswers): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of MANAGED) {
    const set = value(answers);
    if (set) values[envName(key)] = set;
  }
  return values;
}

/** The variables of the `.env` in `folder`, or none when there is no such file. */
export function readDotEnv(folder: string): Record<string, string> {
  const path = join(folder, SETUP_FILES.env);
  if (!existsSync(path)) return {};
  try {
    return definedOnly(parseEnv(readFileSync(path, 'utf8')));
  } catch {
    return {};
  }
}

function definedOnly(dict: NodeJS.Dict<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(dict).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** A value as `.env` must spell it to read back the same: bare when plain, else quoted. */
function envLiteral(name: string, value: string): string {
  if (/^[\w.:/@+,=%-]*$/.test(value)) return value;
  if (!/['\n\r]/.test(value)) return `'${value}'`;
  if (!/["\n\r\\]/.test(value)) return `"${value}"`;
  throw new Error(`${name} holds characters a .env file cannot keep; set it in the environment instead`);
}

/**
 * The text of `.env`: init's variables, then those of the previous file that
 * init does not manage (a store URL, an API root), kept as they were.
 */
export function renderDotEnv(values: Record<string, string>, previous: Record<string, string>): string {
  const lines = ['# Written by pincer init. Secrets: keep this file private (mode 600) and out of version control.'];
  for (const [name, value] of Object.entries(values)) lines.push(`${name}=${envLiteral(name, value)}`);
  const kept = Object.entries(previous).filter(([name]) => !MANAGED_ENV_NAMES.includes(name));
  if (kept.length) lines.push('', '# Kept from the previous .env.', ...kept.map(([name, value]) => `${name}=${envLiteral(name, value)}`));
  const textOf = `${lines.join('\n')}\n`;
  // What the bot reads back must be what was meant, to the character.
  const readBack = definedOnly(parseEnv(textOf));
  for (const [name, value] of [...Object.entries(values), ...kept]) {
    if (readBack[name] !== value) throw new Error(`${name} would not read back from .env as written; set it in the environment instead`);
  }
  return textOf;
}

/** The non-secret settings, in the config file's own keys (see `config/pincer.example.yaml`). */
export function configSettings(answers: InitAnswers): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    dataDir: './data',
    logLevel: 'info',
    llm: { maxTokens: 4096, stream: true },
    agent: { name: 'pincer', maxToolIterations: 10 },
    tools: { shell: { enabled: false } },
    terminal: { enabled: 'auto', userName: 'owner' },
  };
  // Only the owners: each platform's user list holds its owners' ids (an empty list would admit everyone).
  const users = (platform: string) => (answers.access === 'owners' ? ownerIdsOn(answers.owners, platform) : []);
  if (answers.telegramToken) settings.telegram = { mode: 'polling', allowedUsers: users('telegram'), allowedChats: [] };
  if (answers.discordToken) settings.discord = { allowedGuilds: [], allowedChannels: [], allowedUsers: users('discord') };
  if (answers.slackBotToken) settings.slack = { mode: 'socket', allowedTeams: [], allowedChannels: [], allowedUsers: users('slack') };
  return settings;
}

const CONFIG_HEADER = `# pincer configuration, written by pincer init.
# Every key, its default and its meaning: config/pincer.example.yaml.
# The model's endpoint and name, the owners, the API key and the tokens are in .env
# (OPENAI_BASE_URL, PINCER_MODEL, PINCER_OWNERS, ...): an environment variable wins over this file.
# Secrets never belong here.
# Who may use the bot: the users in each platform's allowedUsers, and the owners (always admitted).
# An empty allowedUsers admits everyone who can reach the bot; pincer start and doctor warn about it.
`;

/** The text of `config/pincer.yaml`. */
export function renderConfig(answers: InitAnswers): string {
  return `${CONFIG_HEADER}\n${stringifyYaml(configSettings(answers))}`;
}

/**
 * Validates what the bot will load from both files together, as `loadConfig`
 * will: the settings, with the variables applied over them.
 *
 * @throws ConfigError naming each bad value
 */
export function validateSetup(answers: InitAnswers): void {
  const settings = configSettings(answers);
  const section = (key: string) => (settings[key] ?? {}) as Record<string, unknown>;
  parseConfig({
    ...settings,
    owners: answers.owners,
    llm: { ...section('llm'), baseUrl: answers.baseUrl, apiKey: answers.apiKey, model: answers.model },
    telegram: { ...section('telegram'), token: answers.telegramToken, apiRoot: answers.telegramApiRoot },
    discord: { ...section('discord'), token: answers.discordToken, apiUrl: answers.discordApiUrl },
    slack: { ...section('slack'), botToken: answers.slackBotToken, appToken: answers.slackAppToken, apiUrl: answers.slackApiUrl },
  });
}

/** The setup files that already exist in `folder`. */
export function existingSetupFiles(folder: string): string[] {
  return Object.values(SETUP_FILES).filter((file) => existsSync(join(folder, file)));
}

/** Writes both files in `folder`; `.env` is readable by its owner only (0600), whatever was there. */
export function writeSetupFiles(folder: string, answers: InitAnswers, previousEnv: Record<string, string>): void {
  const dotEnv = renderDotEnv(envValues(answers), previousEnv);
  const config = renderConfig(answers);
  writeReplacing(join(folder, SETUP_FILES.env), dotEnv, PRIVATE_FILE_MODE);
  writeReplacing(join(folder, SETUP_FILES.config), config, 0o644);
}

/**
 * Writes a new file beside `path` and renames it over: the mode is the new
 * file's (an old `.env` readable by others is not reused), and a reader never
 * sees half a file.
 */
function writeReplacing(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text, { mode, flag: 'wx' });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
