/**
 * Loads the configuration: defaults, then the file, then the environment
 * (the environment wins). Fails with every bad key, its value and what was expected.
 */
import { existsSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { ConfigSchema, type Config } from './schema.js';

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
};

const LIST_KEYS = new Set(['owners']);
const DEFAULT_CONFIG_PATH = 'config/pincer.yaml';

/** Where the configuration came from, for the start-up log line. */
export interface LoadedConfig {
  config: Config;
  file?: string;
}

/**
 * Builds the configuration from a file (PINCER_CONFIG or `config/pincer.yaml`
 * when present) and the environment.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const file = env.PINCER_CONFIG ?? (existsSync(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : undefined);
  const raw = file ? readConfigFile(file) : {};
  applyEnvironment(raw, env);
  return { config: parseConfig(raw), file };
}

/** Validates a raw object against the schema, throwing a ConfigError that names each bad key. */
export function parseConfig(raw: unknown): Config {
  const result = ConfigSchema.safeParse(raw);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => describeIssue(issue, raw)));
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
    parsed = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError([`${file}: not valid ${extname(file) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`]);
  }
  if (parsed == null) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError([`${file}: expected a mapping of keys at the top level`]);
  }
  return parsed as Record<string, unknown>;
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

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const key = issue.path.join('.') || '(root)';
  const envName = Object.entries(ENV_KEYS).find(([, k]) => k === key)?.[0];
  const value = valueAt(raw, issue.path);
  const shown = /token|key|secret/i.test(key) ? '(hidden)' : JSON.stringify(value);
  const where = envName ? `${key} (${envName})` : key;
  return `${where}: ${issue.message}; got ${shown ?? 'nothing'}`;
}

function valueAt(raw: unknown, path: PropertyKey[]): unknown {
  let node: unknown = raw;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}
