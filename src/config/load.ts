/**
 * Loads the configuration: defaults, then the file, then the environment
 * (the environment wins). Fails with every bad key, its value and what was expected.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { expandReferences, secretFileIssues } from './mcp-secrets.js';
import { withoutPassword } from '../store/url.js';
import { closestKey, knownKeysAt } from './keys.js';
import { applyRenames, dropRetired } from './renamed.js';
import { ConfigSchema, PLATFORM_LIST, PLATFORMS, type Config } from './schema.js';
import { syntaxErrorText } from './syntax-error.js';

/** The environment variables pincer reads, mapped to their config keys. A public contract. */
export const ENV_KEYS: Readonly<Record<string, string>> = {
  PINCER_DATA_DIR: 'dataDir',
  PINCER_STORE_URL: 'storeUrl',
  PINCER_OWNERS: 'owners',
  PINCER_LOG_LEVEL: 'logLevel',
  OPENAI_API_KEY: 'llm.apiKey',
  OPENAI_BASE_URL: 'llm.baseUrl',
  PINCER_MODEL: 'llm.model',
  TELEGRAM_BOT_TOKEN: 'telegram.token',
  TELEGRAM_API_ROOT: 'telegram.apiRoot',
  DISCORD_BOT_TOKEN: 'discord.token',
  DISCORD_API_URL: 'discord.apiUrl',
  SLACK_BOT_TOKEN: 'slack.botToken',
  SLACK_APP_TOKEN: 'slack.appToken',
  SLACK_SIGNING_SECRET: 'slack.signingSecret',
  SLACK_API_URL: 'slack.apiUrl',
  PINCER_HTTP_PORT: 'http.port',
  PINCER_INSTANCE_ID: 'cluster.instanceId',
};

const LIST_KEYS = new Set(['owners']);
/** An MCP server's env and headers: their values may be secrets, so a message never quotes them. */
const MCP_VALUES = /^mcp\.servers\.[^.]+\.(?:env|headers)\b/;
const DEFAULT_CONFIG_PATH = 'config/pincer.yaml';

/** Where the configuration came from, for the start-up log line. */
export interface LoadedConfig {
  config: Config;
  file?: string;
  /** Warnings for renamed and retired keys, to log once the logger exists. */
  warnings: string[];
}

/**
 * Builds the configuration from a file (PINCER_CONFIG or `config/pincer.yaml`
 * when present) and the environment.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const file = env.PINCER_CONFIG ?? (existsSync(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : undefined);
  const raw = file ? readConfigFile(file) : {};
  const warnings = [...applyRenames(raw), ...dropRetired(raw)];
  // MCP secrets: none written out in a file others can read, and `${VAR}` references expanded.
  const secretIssues = [...(file ? secretFileIssues(file, statSync(file).mode, raw) : []), ...expandReferences(raw, env)];
  if (secretIssues.length) throw new ConfigError(secretIssues);
  applyEnvironment(raw, env);
  const config = parseConfig(raw);
  const unknown = unknownPlatforms(config);
  if (unknown.length) throw new ConfigError(unknown);
  return { config, file, warnings };
}

/** Owners and admins on a platform pincer has no channel for: they could never be recognised. */
function unknownPlatforms(config: Config): string[] {
  return (['owners', 'admins'] as const).flatMap((key) =>
    config[key].flatMap((entry, index) => {
      const platform = entry.slice(0, entry.indexOf(':'));
      if ((PLATFORMS as readonly string[]).includes(platform)) return [];
      const where = key === 'owners' ? `owners[${index}] (PINCER_OWNERS)` : `admins[${index}]`;
      return [`${where}: unknown platform "${platform}"; expected platform:userId with platform ${PLATFORM_LIST} (e.g. telegram:42); got ${JSON.stringify(entry)}`];
    }),
  );
}

/** Validates a raw object against the schema, throwing a ConfigError that names each bad key. */
export function parseConfig(raw: unknown): Config {
  const result = ConfigSchema.safeParse(raw);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.flatMap((issue) => describeIssue(issue, raw)));
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`PINCER_CONFIG: cannot read ${file}: ${(error as Error).message}`]);
  }
  let parsed: unknown;
  try {
    // Integers are read as bigint so that a Discord id past 2^53 keeps every digit.
    parsed = extname(file) === '.json' ? JSON.parse(text) : exactIntegers(parseYaml(text, { intAsBigInt: true }));
  } catch (error) {
    throw new ConfigError([syntaxErrorText(file, text, error, extname(file) === '.json' ? 'JSON' : 'YAML')]);
  }
  if (parsed == null) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError([`${file}: expected a mapping of keys at the top level`]);
  }
  return parsed as Record<string, unknown>;
}

/** Replaces each bigint: a safe one by its number, a larger one (only ever an id) by its exact decimal text. */
function exactIntegers(value: unknown): unknown {
  if (typeof value === 'bigint') return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(exactIntegers);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, exactIntegers(item)]));
  }
  return value;
}

function applyEnvironment(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, key, LIST_KEYS.has(key) ? splitList(value) : value);
  }
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string[] {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => describeUnknownKey([...issue.path, key]));
  const key = displayKey(issue.path);
  const envName = Object.entries(ENV_KEYS).find(([, k]) => k === String(issue.path[0]) || k === issue.path.join('.'))?.[0];
  const value = valueAt(raw, issue.path);
  const shown = /token|key|secret/i.test(key) || MCP_VALUES.test(key) ? '(hidden)' : value === undefined ? undefined : withoutPassword(JSON.stringify(value));
  const where = envName ? `${key} (${envName})` : key;
  return [`${where}: ${issue.message}; got ${shown ?? 'nothing'}`];
}

/** `telegarm: unknown key; did you mean "telegram"?` */
function describeUnknownKey(path: PropertyKey[]): string {
  const known = knownKeysAt(ConfigSchema, path.slice(0, -1));
  const closest = closestKey(String(path.at(-1)), known);
  const key = displayKey(path);
  if (closest) return `${key}: unknown key; did you mean "${displayKey([...path.slice(0, -1), closest])}"?`;
  return `${key}: unknown key; expected one of ${known.join(', ')}`;
}

/** `owners[0]`, `telegram.allowedUsers`. */
function displayKey(path: readonly PropertyKey[]): string {
  const shown = path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
  return shown.replace(/^\./, '') || '(root)';
}

function valueAt(raw: unknown, path: PropertyKey[]): unknown {
  let node: unknown = raw;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}
