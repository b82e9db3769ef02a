/**
 * Start-up contract of `node dist/main.js` (SPEC section 11): what an operator
 * sees when the environment is incomplete or wrong. No TTY is attached (stdin
 * is a pipe), as under a process manager.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from './build.js';
import { cleanUp, startPincer, tempDir, waitUntil } from './pincer.js';
import { closedPort } from '../support/ports.js';

const LLM = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', PINCER_MODEL: 'fake-model' };

let telegram: FakeTelegram | undefined;
/** A server that accepts and stays silent. */
interface BlackHole {
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

let blackHole: BlackHole | undefined;

beforeAll(() => ensureBuilt(), 130_000);
afterEach(async () => {
  await cleanUp();
  await telegram?.close();
  telegram = undefined;
  await blackHole?.close();
  blackHole = undefined;
});

/** A local server that accepts connections and never says a word, like a host behind a dropping firewall. */
async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    accepted: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A config file setting only the store's connect time limit. */
function configWithConnectTimeout(ms: number): string {
  const file = join(tempDir('pincer-e2e-config-'), 'pincer.yaml');
  writeFileSync(file, `storeConnectTimeoutMs: ${ms}\n`);
  return file;
}

/** The JSON log lines of a run (stderr, no TTY). */
function logLines(stderr: string): Array<Record<string, unknown> & { level: number; msg?: string }> {
  return stderr.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown> & { level: number; msg?: string }];
    } catch {
      return [];
    }
  });
}

describe('start-up without a usable configuration', () => {
  it('exits non-zero when no channel is configured and no terminal is attached, listing the variables to set', async () => {
    const started = Date.now();
    const pincer = startPincer(LLM);
    const exit = await pincer.waitForExit(5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    const stderr = pincer.stderr();
    expect(stderr).toContain('no channel is configured');
    for (const name of [
      'TELEGRAM_BOT_TOKEN',
      'TELEGRAM_API_ROOT',
      'DISCORD_BOT_TOKEN',
      'DISCORD_API_URL',
      'SLACK_BOT_TOKEN',
      'SLACK_APP_TOKEN',
      'SLACK_SIGNING_SECRET',
      'SLACK_API_URL',
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      'PINCER_MODEL',
      'PINCER_DATA_DIR',
      'PINCER_STORE_URL',
      'PINCER_OWNERS',
      'PINCER_LOG_LEVEL',
    ]) {
      expect(stderr, `stderr should name ${name}`).toContain(name);
    }
  });

  it('exits non-zero with a channel token but no language model, saying exactly what to set', async () => {
    const pincer = startPincer({ TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token' });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    const firstLine = pincer.stderr().split('\n')[0]!;
    expect(firstLine).toContain('no language model is configured');
    expect(firstLine).toContain('OPENAI_API_KEY');
    expect(firstLine).toContain('OPENAI_BASE_URL');
    expect(firstLine).toContain('PINCER_MODEL');
    // Nothing was contacted and nothing pretends to run.
    expect(pincer.output()).not.toContain('pincer is running');
  });

  it('asks only for the model name when the endpoint is set', async () => {
    const pincer = startPincer({ TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    const firstLine = pincer.stderr().split('\n')[0]!;
    expect(firstLine).toContain('PINCER_MODEL');
    expect(firstLine).not.toContain('OPENAI_BASE_URL');
  });

  it('rejects a Bot API root with a trailing slash, naming the variable, the value and what is expected', async () => {
    const pincer = startPincer({ ...LLM, TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token', TELEGRAM_API_ROOT: 'http://127.0.0.1:1/' });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    const line = pincer.stderr().split('\n').find((candidate) => candidate.includes('TELEGRAM_API_ROOT'));
    expect(line, pincer.output()).toBeDefined();
    expect(line).toContain('"http://127.0.0.1:1/"');
    expect(line).toMatch(/must not end with a slash/);
  });

  it('rejects an unknown log level, naming the variable, the value and the accepted levels', async () => {
    const pincer = startPincer({ ...LLM, TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token', PINCER_LOG_LEVEL: 'loud' });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    const line = pincer.stderr().split('\n').find((candidate) => candidate.includes('PINCER_LOG_LEVEL'));
    expect(line, pincer.output()).toBeDefined();
    expect(line).toContain('"loud"');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace']) expect(line).toContain(level);
  });

  it('rejects a malformed endpoint URL without echoing the API key', async () => {
    const apiKey = 'sk-e2e-secret-key-0123456789';
    const pincer = startPincer({
      TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token',
      OPENAI_API_KEY: apiKey,
      OPENAI_BASE_URL: 'not a url',
      PINCER_MODEL: 'fake-model',
    });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    const line = pincer.stderr().split('\n').find((candidate) => candidate.includes('OPENAI_BASE_URL'));
    expect(line, pincer.output()).toBeDefined();
    expect(line).toContain('"not a url"');
    expect(pincer.output()).not.toContain(apiKey);
    expect(pincer.output()).not.toContain('AAFnot-a-real-token');
  });
});

describe('one process per SQLite data folder', () => {
  it('a second pincer on the same data folder exits with a clear message; after a kill -9 of the first, the folder is free again', async () => {
    const fake = (telegram = await startFakeTelegram());
    const env = { ...LLM, TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot };
    const dataDir = tempDir();
    const first = startPincer(env, { dataDir });
    await first.waitForOutput('pincer is running', 20_000);
    const second = startPincer(env, { dataDir });
    const exit = await second.waitForExit(10_000);
    expect(exit.code, second.output()).toBe(1);
    expect(second.stderr()).toMatch(new RegExp(`another pincer \\(pid ${first.pid}\\) is using this data folder; one process per SQLite store`));
    process.kill(first.pid, 'SIGKILL');
    await first.waitForExit(5_000);
    const third = startPincer(env, { dataDir });
    await third.waitForOutput('pincer is running', 20_000);
  }, 60_000);
});

describe('the operations endpoint of the built product', () => {
  it('serves /healthz, /readyz and /metrics on PINCER_HTTP_PORT', async () => {
    const fake = (telegram = await startFakeTelegram());
    const port = await closedPort();
    const pincer = startPincer({ ...LLM, TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, PINCER_HTTP_PORT: String(port) });
    await pincer.waitForOutput('pincer is running', 20_000);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('pincer_turns_total');
  }, 40_000);
});

describe('start-up against a platform that refuses', () => {
  it('says why when the Telegram token is rejected, naming TELEGRAM_BOT_TOKEN, and exits non-zero', async () => {
    const fake = (telegram = await startFakeTelegram());
    const wrongToken = `${fake.bot.id}:AAFwrong-token-0123456789`;
    const pincer = startPincer({ ...LLM, TELEGRAM_BOT_TOKEN: wrongToken, TELEGRAM_API_ROOT: fake.apiRoot });
    const exit = await pincer.waitForExit(10_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    // The operator learns what to fix: the adapter's reason reaches the output.
    expect(pincer.output()).toMatch(/rejected|unauthori[sz]ed|401/i);
    expect(pincer.output()).toContain('TELEGRAM_BOT_TOKEN');
    expect(pincer.output()).not.toContain(wrongToken);
    expect(pincer.output()).not.toContain('AAFwrong-token-0123456789');
  });

  it('names the missing SLACK_APP_TOKEN when only SLACK_BOT_TOKEN is set, instead of claiming no channel is configured', async () => {
    const pincer = startPincer({ ...LLM, SLACK_BOT_TOKEN: 'xoxb-e2e-only-bot-token-0123' });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    expect(pincer.stderr()).not.toContain('no channel is configured');
    const line = pincer.stderr().split('\n').find((candidate) => candidate.includes('SLACK_APP_TOKEN') && /missing|required|needs/i.test(candidate));
    expect(line, pincer.output()).toBeDefined();
    expect(pincer.output()).not.toContain('xoxb-e2e-only-bot-token-0123');
  });

  it('tells the operator within 20 s when the Telegram API root refuses connections', async () => {
    const port = await closedPort();
    const pincer = startPincer({ ...LLM, TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token', TELEGRAM_API_ROOT: `http://127.0.0.1:${port}` });
    const apiRoot = `http://127.0.0.1:${port}`;
    // The warning or error must be about the Bot API at that address, not just any warning.
    const aboutBotApi = (text: string) => /Bot API/.test(text) && text.includes(apiRoot);
    const warning = () => logLines(pincer.stderr()).find((line) => line.level >= 40 && aboutBotApi(JSON.stringify(line)));
    const told = () => Boolean(warning()) || (!pincer.running() && aboutBotApi(pincer.output()));
    await waitUntil(told, 20_000, () => `an exit or a warning about the unreachable Bot API (nothing so far)\n${pincer.output()}`).catch(
      (error: unknown) => error,
    );
    expect(told(), `20 s without an exit or a warning naming the Bot API at ${apiRoot}\n${pincer.output()}`).toBe(true);
    if (!pincer.running()) expect((await pincer.exited).code).not.toBe(0);
    expect(pincer.output()).not.toContain('AAFnot-a-real-token');
  }, 30_000);

  it('shuts down cleanly on SIGTERM while a channel is still connecting', async () => {
    const port = await closedPort();
    const pincer = startPincer({ ...LLM, TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token', TELEGRAM_API_ROOT: `http://127.0.0.1:${port}` });
    // Give it time to load and start connecting (the first Bot API calls are refused).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(pincer.running(), pincer.output()).toBe(true);
    process.kill(pincer.pid, 'SIGTERM');
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).toBe(0);
    expect(pincer.stderr()).not.toContain('fatal');
  });
});

describe('start-up with values that cannot work', () => {
  const TELEGRAM = { TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token' };

  it.each([
    ['OPENAI_BASE_URL', '127.0.0.1:11434/v1', /^pincer: invalid configuration: llm\.baseUrl \(OPENAI_BASE_URL\): expected an http:\/\/ or https:\/\/ URL \(did you mean "http:\/\/127\.0\.0\.1:11434\/v1"\?\); got "127\.0\.0\.1:11434\/v1"$/],
    ['OPENAI_BASE_URL', 'localhost:8080/v1', /^pincer: invalid configuration: llm\.baseUrl \(OPENAI_BASE_URL\): expected an http:\/\/ or https:\/\/ URL \(did you mean "http:\/\/localhost:8080\/v1"\?\)/],
    ['PINCER_OWNERS', '42', /^pincer: invalid configuration: owners\[0\] \(PINCER_OWNERS\): expected platform:userId .*telegram, discord, slack or terminal; got "42"$/],
    ['PINCER_OWNERS', 'irc:42', /^pincer: invalid configuration: owners\[0\] \(PINCER_OWNERS\): unknown platform "irc"; .*got "irc:42"$/],
    ['PINCER_STORE_URL', 'mysql://pincer:hunter2@db:3306/pincer', /^pincer: invalid configuration: storeUrl \(PINCER_STORE_URL\): unsupported store URL; expected sqlite:\/\/path, redis:\/\/host:port or postgres:\/\/user@host\/db; got "mysql:\/\/pincer:\*\*\*@db:3306\/pincer"$/],
  ])('%s=%s stops the start with one line naming the value and what is expected (exit 78)', async (name, value, line) => {
    const pincer = startPincer({ ...LLM, ...TELEGRAM, [name]: value });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).toBe(78);
    expect(pincer.stderr().trimEnd().split('\n'), pincer.output()).toEqual([expect.stringMatching(line)]);
    expect(pincer.output()).not.toContain('hunter2');
    expect(pincer.output()).not.toMatch(/\n\s+at /);
  });

  it('stops at a misspelt config key, naming its full path and the closest known key', async () => {
    const file = join(tempDir('pincer-e2e-config-'), 'pincer.yaml');
    writeFileSync(file, 'telegram:\n  allowedUser: [12345]\n');
    const pincer = startPincer({ ...LLM, ...TELEGRAM, PINCER_CONFIG: file });
    const exit = await pincer.waitForExit(5_000);
    expect(exit.code, pincer.output()).toBe(78);
    expect(pincer.stderr().trimEnd()).toBe('pincer: invalid configuration: telegram.allowedUser: unknown key; did you mean "telegram.allowedUsers"?');
  });
});

describe('start-up against a store that does not answer', () => {
  const TELEGRAM = { TELEGRAM_BOT_TOKEN: '123456:AAFnot-a-real-token' };

  /** Starts against `url`, expects a non-zero exit within `boundMs` naming the URL without its password. */
  async function expectStoreFailure(url: string, shown: string, boundMs: number, env: Record<string, string> = {}): Promise<number> {
    const started = Date.now();
    const pincer = startPincer({ ...LLM, ...TELEGRAM, PINCER_STORE_URL: url, ...env });
    // The bound runs from the first connection attempt; a loaded machine may take seconds to get there.
    const exit = await pincer.waitForExit(boundMs + 6_000);
    const took = Date.now() - started;
    expect(exit.code, pincer.output()).not.toBe(0);
    expect(exit.code, pincer.output()).not.toBeNull();
    const line = pincer.stderr().split('\n').find((candidate) => candidate.startsWith('pincer: could not connect to the store'));
    expect(line, pincer.output()).toContain(`could not connect to the store at ${shown}`);
    expect(pincer.output()).not.toContain(':pw@');
    expect(pincer.output()).not.toContain('s3cret');
    expect(pincer.output()).not.toContain('pincer is running');
    return took;
  }

  it('fails fast with the Postgres URL, password masked, when the port refuses', async () => {
    const took = await expectStoreFailure('postgres://u:pw@127.0.0.1:1/db', 'postgres://u:***@127.0.0.1:1/db', 5_000);
    expect(took).toBeLessThan(5_000);
  });

  it('gives up on a refusing Redis within the configured bound', async () => {
    const took = await expectStoreFailure('redis://:s3cret@127.0.0.1:1', 'redis://:***@127.0.0.1:1 within 2 s', 2_000, {
      PINCER_CONFIG: configWithConnectTimeout(2_000),
    });
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(5_000);
  });

  it('gives up on a Redis that accepts and never answers within the configured bound', async () => {
    blackHole = await startBlackHole();
    const took = await expectStoreFailure(`redis://u:s3cret@127.0.0.1:${blackHole.port}`, `redis://u:***@127.0.0.1:${blackHole.port} within 2 s`, 2_000, {
      PINCER_CONFIG: configWithConnectTimeout(2_000),
    });
    expect(took).toBeLessThan(5_000);
  });

  it('gives up on a Postgres that accepts and never answers within the default 10 s', async () => {
    blackHole = await startBlackHole();
    const took = await expectStoreFailure(`postgres://u:pw@127.0.0.1:${blackHole.port}/db`, `postgres://u:***@127.0.0.1:${blackHole.port}/db within 10 s`, 10_000);
    expect(took).toBeGreaterThanOrEqual(10_000);
    expect(took).toBeLessThan(16_000);
  }, 25_000);

  it.each(['postgres://u:pw@127.0.0.1:PORT/db', 'redis://u:pw@127.0.0.1:PORT'])('ends within 2 s on SIGTERM while connecting to %s', async (template) => {
    blackHole = await startBlackHole();
    const pincer = startPincer({ ...LLM, ...TELEGRAM, PINCER_STORE_URL: template.replace('PORT', String(blackHole.port)) });
    // Wait until it is connecting: the black hole has accepted its connection.
    const hole = blackHole;
    await waitUntil(() => hole.accepted() > 0, 8_000, () => `a connection to the black hole\n${pincer.output()}`);
    expect(pincer.running(), pincer.output()).toBe(true);
    const signalled = Date.now();
    process.kill(pincer.pid, 'SIGTERM');
    const exit = await pincer.waitForExit(4_000);
    expect(Date.now() - signalled, pincer.output()).toBeLessThan(2_000);
    expect(exit.code, pincer.output()).toBe(0);
    expect(pincer.output()).not.toContain(':pw@');
    expect(pincer.stderr()).not.toContain('fatal');
  });
});
