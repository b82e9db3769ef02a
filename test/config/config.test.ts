import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { ENV_KEYS, loadConfig, parseConfig } from '../../src/config/load.js';
import { applyRenames, dropRetired } from '../../src/config/renamed.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'pincer-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every key path of an object schema, depth first. */
function keyPaths(schema: z.ZodType, prefix = ''): string[] {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  if (!(inner instanceof z.ZodObject)) return [prefix];
  return Object.entries(inner.shape).flatMap(([key, value]) => keyPaths(value as z.ZodType, prefix ? `${prefix}.${key}` : key));
}

describe('configuration', () => {
  it('has a default for everything', () => {
    const config = parseConfig({});
    expect(config.agent.maxToolIterations).toBe(10);
    expect(config.agent.approvalTimeoutMs).toBe(600_000);
    expect(config.dataDir).toBe('./data');
  });

  it('documents every key of the schema in config/pincer.example.yaml, which parses', () => {
    const text = readFileSync('config/pincer.example.yaml', 'utf8');
    expect(() => parseConfig(parse(text))).not.toThrow();
    const missing = keyPaths(ConfigSchema).filter((path) => {
      const last = path.split('.').at(-1)!;
      return !new RegExp(`^\\s*#?\\s*${last}:`, 'm').test(text);
    });
    expect(missing).toEqual([]);
  });

  it('reads the environment variables of the public contract, and the environment wins over the file', () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'llm:\n  model: from-file\n  maxTokens: 100\n');
    const { config } = loadConfig({
      PINCER_CONFIG: file,
      PINCER_MODEL: 'from-env',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      PINCER_OWNERS: 'telegram:42, discord:1234',
      TELEGRAM_BOT_TOKEN: '123:abc',
      TELEGRAM_API_ROOT: 'http://127.0.0.1:8081',
      SLACK_API_URL: 'http://127.0.0.1:9/api/',
    });
    expect(config.llm.model).toBe('from-env');
    expect(config.llm.maxTokens).toBe(100);
    expect(config.owners).toEqual(['telegram:42', 'discord:1234']);
    expect(config.telegram.apiRoot).toBe('http://127.0.0.1:8081');
    expect(Object.keys(ENV_KEYS)).toEqual(
      expect.arrayContaining(['PINCER_DATA_DIR', 'PINCER_STORE_URL', 'OPENAI_API_KEY', 'DISCORD_API_URL', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET']),
    );
  });

  it('names the key, the value and what is expected for a bad value', () => {
    try {
      loadConfig({ TELEGRAM_API_ROOT: 'http://127.0.0.1:8081/', PINCER_LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as ConfigError).message;
      expect(message).toContain('telegram.apiRoot (TELEGRAM_API_ROOT)');
      expect(message).toContain('must not end with a slash');
      expect(message).toContain('logLevel (PINCER_LOG_LEVEL)');
      expect(message).toContain('"loud"');
    }
  });

  it('refuses a job default above the bound the model may not exceed, naming both keys', () => {
    const config = parseConfig({});
    expect(config.jobs).toMatchObject({ maxIterations: 30, maxIterationsLimit: 100, timeoutMinutes: 30, maxTimeoutMinutes: 240, maxActivePerUser: 5 });
    expect(config.routines.maxPerUser).toBe(20);
    expect(config.agent.maxToolCallsPerBatch).toBe(16);
    let error: unknown;
    try {
      parseConfig({ jobs: { maxIterations: 120, timeoutMinutes: 300 } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      'jobs.maxIterations: must be at most jobs.maxIterationsLimit (100); got 120',
      'jobs.timeoutMinutes: must be at most jobs.maxTimeoutMinutes (240); got 300',
    ]);
    expect(() => parseConfig({ jobs: { maxIterations: 120, maxIterationsLimit: 150 } })).not.toThrow();
  });

  it('reports a file that is not valid YAML', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'agent: [unclosed');
    expect(() => loadConfig({ PINCER_CONFIG: file })).toThrow(/not valid YAML/);
  });

  it('takes the log level in any case', () => {
    expect(loadConfig({ PINCER_LOG_LEVEL: 'DEBUG' }).config.logLevel).toBe('debug');
    expect(parseConfig({ logLevel: ' Warn ' }).logLevel).toBe('warn');
  });

  it('hides secret values in errors', () => {
    expect(() => parseConfig({ llm: { apiKey: 42 } })).toThrow(/\(hidden\)/);
  });
});

/** The lines of the ConfigError thrown by `load`, or fails. */
function configErrors(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  return expect.unreachable('no ConfigError was thrown');
}

function fileWith(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('configuration: a YAML mistake', () => {
  it.each([
    ['a quote never closed, where it opens (not past the end of the file)', 'llm:\n  model: x\ntelegram:\n  token: "abc\n  allowedUsers: [1]\nlogLevel: info\n', 'line 4, column 10: this quote is never closed\n    token: "abc\n           ^'],
    ['a bracket never closed, where it opens (not on the next line)', 'telegram:\n  allowedUsers: [1, 2\nlogLevel: info\n', 'line 2, column 17: this [ is never closed'],
    ['a line indented too deep (not the line above it)', 'llm:\n  model: x\n   baseUrl: http://localhost:11434/v1\n', 'line 3, column 4: this line is indented deeper than the key above it'],
    ['a mapping item out of line, at the item (not at its indentation)', 'owners:\n  - telegram:1\n  admins: []\n', 'line 3, column 3: All mapping items must start at the same column'],
    ['a key given twice', 'logLevel: info\nlogLevel: debug\n', 'line 2, column 1: Map keys must be unique'],
  ])('points at %s', (_what, text, expected) => {
    const file = fileWith('mistake.yaml', text);
    expect(configErrors(() => loadConfig({ PINCER_CONFIG: file }))).toEqual([expect.stringContaining(`${file}: not valid YAML at ${expected}`)]);
  });

  it('turns the position JSON names into a line and a column', () => {
    const file = fileWith('mistake.json', '{\n  "logLevel": "info",\n}\n');
    expect(configErrors(() => loadConfig({ PINCER_CONFIG: file }))).toEqual([expect.stringContaining(`${file}: not valid JSON at line 3, column 1`)]);
  });
});

describe('configuration: unknown keys', () => {
  it('stops at a misspelt section, naming it and the closest known key', () => {
    const file = fileWith('typo-top.yaml', 'telegarm:\n  allowedUsers: [42]\n');
    expect(configErrors(() => loadConfig({ PINCER_CONFIG: file }))).toEqual(['telegarm: unknown key; did you mean "telegram"?']);
  });

  it('stops at a misspelt nested key with its full path', () => {
    const file = fileWith('typo-nested.yaml', 'telegram:\n  allowedUser: [42]\ntools:\n  shell:\n    enabeld: true\n');
    expect(configErrors(() => loadConfig({ PINCER_CONFIG: file })).sort()).toEqual([
      'telegram.allowedUser: unknown key; did you mean "telegram.allowedUsers"?',
      'tools.shell.enabeld: unknown key; did you mean "tools.shell.enabled"?',
    ]);
  });

  it('lists the known keys when nothing is close', () => {
    const [line] = configErrors(() => parseConfig({ slack: { webhookSecret: 'x' } }));
    expect(line).toMatch(/^slack\.webhookSecret: unknown key; expected one of botToken, appToken, signingSecret/);
  });

  it('accepts any model name under llm.prices, but not a misspelt price field', () => {
    expect(parseConfig({ llm: { prices: { 'my-own/model:7b': { input: 1, output: 2 } } } }).llm.prices['my-own/model:7b']).toEqual({ input: 1, output: 2 });
    expect(configErrors(() => parseConfig({ llm: { prices: { m: { input: 1, output: 2, cachedInptu: 1 } } } }))).toEqual([
      'llm.prices.m.cachedInptu: unknown key; did you mean "llm.prices.m.cachedInput"?',
    ]);
  });

  it('moves a renamed key to its new place with a deprecation warning', () => {
    const raw: Record<string, unknown> = { telegram: { allowed: ['42'] } };
    const warnings = applyRenames(raw, { 'telegram.allowed': 'telegram.allowedUsers' });
    expect(warnings).toEqual(['config key telegram.allowed is deprecated; it now lives at telegram.allowedUsers']);
    expect(parseConfig(raw).telegram.allowedUsers).toEqual(['42']);
  });

  it('starts with a warning when a file sets a retired key', () => {
    const file = fileWith('retired.yaml', 'agent:\n  maxIterations: 50\n  maxToolIterations: 7\n');
    const { config, warnings } = loadConfig({ PINCER_CONFIG: file });
    expect(config.agent.maxToolIterations).toBe(7);
    expect(config.agent).not.toHaveProperty('maxIterations');
    expect(warnings).toEqual([expect.stringMatching(/^config key agent\.maxIterations has no effect and can be removed: /)]);
  });

  it('drops only the retired keys it is given, leaving their neighbours', () => {
    const raw: Record<string, unknown> = { tools: { shell: { old: 1, enabled: true } } };
    expect(dropRetired(raw, { 'tools.shell.old': 'never read', 'tools.web.gone': 'never read' })).toEqual([
      'config key tools.shell.old has no effect and can be removed: never read',
    ]);
    expect(raw).toEqual({ tools: { shell: { enabled: true } } });
  });
});

describe('configuration: ids written as numbers', () => {
  it('keeps YAML number ids exact, including Discord ids past 2^53 and negative chat ids', () => {
    const file = fileWith(
      'ids.yaml',
      [
        'telegram:',
        '  allowedUsers: [12345]',
        '  allowedChats: [-1001234567890]',
        'discord:',
        '  allowedGuilds: [123456789012345678901]',
        '  commandGuildIds: [1234567890123456789]',
        '  allowedUsers: ["987654321098765432"]',
        'owners: [telegram:42, "discord:123456789012345678901"]',
        'llm:',
        '  maxTokens: 2048',
        '',
      ].join('\n'),
    );
    const { config } = loadConfig({ PINCER_CONFIG: file });
    expect(config.telegram.allowedUsers).toEqual(['12345']);
    expect(config.telegram.allowedChats).toEqual(['-1001234567890']);
    expect(config.discord.allowedGuilds).toEqual(['123456789012345678901']);
    expect(config.discord.commandGuildIds).toEqual(['1234567890123456789']);
    expect(config.discord.allowedUsers).toEqual(['987654321098765432']);
    expect(config.owners).toEqual(['telegram:42', 'discord:123456789012345678901']);
    expect(config.llm.maxTokens).toBe(2048);
  });

  it('accepts small JSON number ids and refuses one that lost digits, asking to quote it', () => {
    const fine = fileWith('ids.json', '{"telegram": {"allowedUsers": [12345], "allowedChats": [-100123]}}');
    expect(loadConfig({ PINCER_CONFIG: fine }).config.telegram).toMatchObject({ allowedUsers: ['12345'], allowedChats: ['-100123'] });
    const big = fileWith('big-ids.json', '{"discord": {"allowedGuilds": [123456789012345678901]}}');
    const [line, ...rest] = configErrors(() => loadConfig({ PINCER_CONFIG: big }));
    expect(rest).toEqual([]);
    expect(line).toMatch(/^discord\.allowedGuilds\[0\]: .*loses digits.*write the id in quotes/);
  });
});

describe('configuration: values that cannot work', () => {
  it('asks for a scheme on an endpoint URL written without one', () => {
    for (const value of ['127.0.0.1:11434/v1', 'localhost:8080/v1']) {
      expect(configErrors(() => loadConfig({ OPENAI_BASE_URL: value }))).toEqual([
        `llm.baseUrl (OPENAI_BASE_URL): expected an http:// or https:// URL (did you mean "http://${value}"?); got "${value}"`,
      ]);
    }
  });

  it('asks for platform:userId in PINCER_OWNERS', () => {
    expect(configErrors(() => loadConfig({ PINCER_OWNERS: 'telegram:1,42' }))).toEqual([
      'owners[1] (PINCER_OWNERS): expected platform:userId (e.g. telegram:42) with platform telegram, discord, slack or terminal; got "42"',
    ]);
    expect(configErrors(() => loadConfig({ PINCER_OWNERS: 'telegram:1,irc:7' }))).toEqual([
      'owners[1] (PINCER_OWNERS): unknown platform "irc"; expected platform:userId with platform telegram, discord, slack or terminal (e.g. telegram:42); got "irc:7"',
    ]);
  });

  it('names the supported store URLs for another scheme, without the password', () => {
    expect(configErrors(() => loadConfig({ PINCER_STORE_URL: 'mysql://pincer:hunter2@db:3306/pincer' }))).toEqual([
      'storeUrl (PINCER_STORE_URL): unsupported store URL; expected sqlite://path, redis://host:port or postgres://user@host/db; got "mysql://pincer:***@db:3306/pincer"',
    ]);
  });
});
