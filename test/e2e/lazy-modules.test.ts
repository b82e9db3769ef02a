/**
 * The built product loads only what is configured: a start with the terminal
 * alone (no MCP server, no HTTP port, SQLite, no chat platform) does not load
 * the MCP SDK, the metrics library, the queue and Redis clients, the HTML
 * converter, a syntax highlighter, the command-line parser or any platform's
 * library. Checked through the modules the process actually loaded, not time.
 * A Telegram start loads its markdown renderer with the first answer, not before.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../fakes/llm/server.js';
import { textReply } from '../fakes/llm/script.js';
import { startFakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from './build.js';
import { cleanUp, startPincer, tempDir, type PincerProcess } from './pincer.js';
import { OWNER, say, waitForDm } from './telegram.js';

const TRACE = fileURLToPath(new URL('./module-trace.mjs', import.meta.url));

/** The packages a terminal-only start must not load, and why each is not needed. */
const NOT_CONFIGURED = [
  '@modelcontextprotocol/sdk', // no mcp.servers
  'ajv', // the MCP SDK's validator
  'prom-client', // no PINCER_HTTP_PORT
  '@opentelemetry/api', // prom-client's, and the trace export's
  '@opentelemetry/sdk-trace-base', // no OTEL_EXPORTER_OTLP_ENDPOINT
  '@opentelemetry/exporter-trace-otlp-http',
  'sharp', // no image sent to a model that sees
  'preact', // the console's page is served as files, never loaded by the bot
  'bullmq', // no Redis store
  'ioredis',
  'html-to-text', // loaded on the first http_fetch
  'highlight.js', // code blocks are not highlighted
  'marked-terminal',
  'commander', // the plain start needs no command line
  'discord.js',
  'grammy',
  '@slack/bolt',
  'sharp', // loaded with the first image sent to a model that sees
  'file-type', // loaded with the first file received or sent
  'strtok3',
];

/** The npm packages among the loaded module URLs (each line a URL, then when it loaded). */
function packagesIn(urls: string[]): Set<string> {
  const names = new Set<string>();
  for (const url of urls) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match) names.add(match[1]!);
  }
  return names;
}

/** A port nothing listens on just now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the built product with `config`, waits until it runs, ends it, and returns the packages it loaded. */
async function packagesLoaded(llm: FakeLlm, config: string, env: Record<string, string> = {}): Promise<Set<string>> {
  return packagesIn(await modulesLoaded(llm, config, env));
}

/** The modules of the console (dist/http/console/) among the loaded module URLs. */
function consoleModulesIn(urls: string[]): string[] {
  return urls.filter((url) => /\/dist\/http\/console\//.test(url));
}

/** Starts the built product with `env` (and `config` as its config file, if given), tracing the modules it loads into the returned file. */
function startTraced(env: Record<string, string>, config?: string): { pincer: PincerProcess; trace: string } {
  const dir = tempDir();
  const trace = join(dir, 'modules.txt');
  writeFileSync(trace, '');
  const configFile = join(dir, 'pincer.yaml');
  if (config !== undefined) writeFileSync(configFile, config);
  const pincer = startPincer({
    OPENAI_API_KEY: 'sk-test',
    PINCER_MODEL: 'fake-model',
    ...(config === undefined ? {} : { PINCER_CONFIG: configFile }),
    NODE_OPTIONS: `--import=${TRACE}`,
    PINCER_MODULE_TRACE: trace,
    ...env,
  });
  return { pincer, trace };
}

/** Starts the built product with `config`, waits until it runs, ends it, and returns the URLs of the modules it loaded. */
async function modulesLoaded(llm: FakeLlm, config: string, env: Record<string, string> = {}): Promise<string[]> {
  const { pincer, trace } = startTraced({ OPENAI_BASE_URL: llm.url, ...env }, config);
  await pincer.waitForOutput('pincer is running');
  pincer.child.stdin!.end();
  const exit = await pincer.waitForExit();
  expect(exit.code, pincer.output()).toBe(0);
  return readFileSync(trace, 'utf8').split('\n');
}

describe('what a start loads', () => {
  let llm: FakeLlm;

  beforeAll(async () => {
    ensureBuilt();
    llm = await startFakeLlm();
    return () => llm.close();
  }, 180_000);
  afterEach(cleanUp);

  it('loads none of the unconfigured parts when only the terminal runs', async () => {
    const urls = await modulesLoaded(llm, 'terminal:\n  enabled: on\n');
    // The cluster's modules are for a Redis store only.
    expect(urls.filter((url) => /\/dist\/cluster\//.test(url))).toEqual([]);
    const loaded = packagesIn(urls);
    // The trace works: what every start needs is in it.
    expect(loaded).toContain('openai');
    expect(loaded).toContain('sqlite3');
    expect(loaded).toContain('marked');
    expect(NOT_CONFIGURED.filter((name) => loaded.has(name))).toEqual([]);
  }, 30_000);

  it('loads the model SDK only once it is running, and answers with it', async () => {
    llm.setResponder(() => textReply('the sdk answered'));
    const { pincer, trace } = startTraced({ OPENAI_BASE_URL: llm.url }, 'terminal:\n  enabled: on\n');
    try {
      await pincer.waitForOutput('pincer is running');
      pincer.child.stdin!.write('hello\n');
      await pincer.waitForOutput('the sdk answered');
    } finally {
      llm.setResponder(undefined);
    }
    pincer.child.stdin!.end();
    expect((await pincer.waitForExit()).code, pincer.output()).toBe(0);
    const running = JSON.parse(pincer.output().split('\n').find((line) => line.includes('"pincer is running"'))!) as { time: number };
    const sdkLoads = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((line) => /node_modules\/openai\//.test(line))
      .map((line) => Number(line.split(' ')[1]));
    expect(sdkLoads.length).toBeGreaterThan(10);
    // Each of the SDK's modules loaded after the start said it was running.
    expect(sdkLoads.filter((time) => !(time >= running.time))).toEqual([]);
  }, 30_000);

  it('does not load the image library at start, even for a model that sees', async () => {
    const loaded = await packagesLoaded(llm, 'terminal:\n  enabled: on\nllm:\n  vision: true\n');
    expect(loaded).toContain('openai');
    expect(loaded).not.toContain('sharp');
  }, 30_000);

  it('loads the metrics library once an HTTP port is set', async () => {
    const loaded = await packagesLoaded(llm, 'terminal:\n  enabled: on\nhttp:\n  host: 127.0.0.1\n', { PINCER_HTTP_PORT: String(await freePort()) });
    expect(loaded).toContain('prom-client');
    expect(loaded).not.toContain('@modelcontextprotocol/sdk');
  }, 30_000);

  it('loads none of the console with a port set but console.enabled off, and the console once it is on', async () => {
    const off = await modulesLoaded(llm, 'terminal:\n  enabled: on\nhttp:\n  host: 127.0.0.1\n', { PINCER_HTTP_PORT: String(await freePort()) });
    expect(consoleModulesIn(off)).toEqual([]);
    const on = await modulesLoaded(llm, 'terminal:\n  enabled: on\nhttp:\n  host: 127.0.0.1\nconsole:\n  enabled: true\n', { PINCER_HTTP_PORT: String(await freePort()) });
    expect(consoleModulesIn(on).length).toBeGreaterThan(3);
    // The page's libraries are bundled files the bot serves, never modules it loads.
    expect(packagesIn(on)).not.toContain('preact');
  }, 30_000);

  it('loads the Telegram markdown renderer with the first answer, not at start, and the answer is rendered', async () => {
    const fake = await startFakeTelegram();
    const model = await startFakeLlm({ responder: () => textReply('**bold** and `code`') });
    try {
      const { pincer, trace } = startTraced({
        OPENAI_BASE_URL: model.url,
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.apiRoot,
        PINCER_OWNERS: `telegram:${OWNER.id}`,
      });
      await pincer.waitForOutput('pincer is running', 20_000);
      const renderer = ['mdast-util-from-markdown', 'micromark', 'micromark-extension-gfm'];
      const atStart = packagesIn(readFileSync(trace, 'utf8').split('\n'));
      expect(atStart).toContain('grammy');
      expect(renderer.filter((name) => atStart.has(name))).toEqual([]);

      say(fake, 'hello');
      const answer = await waitForDm(fake, 'bold and code', pincer.output);
      expect(answer.parseMode).toBe('HTML');
      expect(answer.text).toBe('<b>bold</b> and <code>code</code>');
      expect(packagesIn(readFileSync(trace, 'utf8').split('\n'))).toContain('micromark');
    } finally {
      await fake.close();
      await model.close();
    }
  }, 40_000);
});
