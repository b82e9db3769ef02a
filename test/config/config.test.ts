import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { ENV_KEYS, loadConfig, parseConfig } from '../../src/config/load.js';
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

  it('reports a file that is not valid YAML', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'agent: [unclosed');
    expect(() => loadConfig({ PINCER_CONFIG: file })).toThrow(/not valid YAML/);
  });

  it('hides secret values in errors', () => {
    expect(() => parseConfig({ llm: { apiKey: 42 } })).toThrow(/\(hidden\)/);
  });
});
