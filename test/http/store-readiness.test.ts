/**
 * /readyz follows the store (SPEC section 15): the app on a Redis store that
 * stops answering, its connections left open, or that goes away, answers 503
 * naming the store; once the store answers again it is ready again, and the
 * bot still answers.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { freePort } from '../support/ports.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { testDm } from '../support/test-channel.js';
import { holdRedisDb } from '../e2e/cluster-harness.js';

// Database 13 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(13);
}, 900_000);
afterAll(() => releaseDb?.());

const REDIS = process.env.PINCER_TEST_REDIS_URL;

let rig: AppRig | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  // The store answers again before the app stops, so that it stops as usual.
  proxy?.resume();
  await proxy?.restore().catch(() => undefined);
  await rig?.close();
  await proxy?.close();
  rig = undefined;
  proxy = undefined;
});

async function readyz(port: number): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: response.status, body: await response.text() };
}

/** Asks /readyz until its status is `status`; returns that answer. */
async function readyzBecomes(port: number, status: number, timeoutMs: number): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await readyz(port);
    if (answer.status === status) return answer;
    if (Date.now() > deadline) throw new Error(`/readyz stayed ${answer.status} (${answer.body.trim()}) for ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The app rig on the test Redis (database 13, emptied) reached through a proxy, with /readyz on a port of its own. */
async function startOnProxiedRedis(): Promise<number> {
  const url = new URL(REDIS!);
  url.pathname = '/13';
  const redis = new Redis(url.toString());
  await redis.flushdb();
  redis.disconnect();
  proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 6379) });
  url.host = `127.0.0.1:${proxy.port}`;
  const port = await freePort();
  rig = await startAppRig({ config: { storeUrl: url.toString(), http: { port } } });
  return port;
}

async function botAnswers(text: string): Promise<void> {
  const ada = { id: 'owner', name: 'Ada' };
  const dm = testDm(ada.id);
  rig!.platform.channel.userMessage({ chat: dm, sender: ada, text });
  await rig!.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => m.text === `echo: ${text}`), 10_000, `the answer to "${text}"`);
}

describe.skipIf(!REDIS)(`/readyz and a Redis store that stops answering${REDIS ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)'}`, () => {
  it('answers 503 naming the store while it is silent with its connections open, then 200 again, and the bot answers', async () => {
    const port = await startOnProxiedRedis();
    expect(await readyzBecomes(port, 200, 5_000)).toEqual({ status: 200, body: 'ready\n' });
    await botAnswers('before');

    proxy!.stall();
    const silent = await readyz(port);
    expect(silent).toEqual({ status: 503, body: 'not ready: store unreachable: no answer in 2 s\n' });

    proxy!.resume();
    expect(await readyzBecomes(port, 200, 10_000)).toEqual({ status: 200, body: 'ready\n' });
    await botAnswers('after');
  }, 30_000);

  it('answers 503 naming the store while its server is gone, then 200 once it is back; the outage goes to the log, not raw to stderr', async () => {
    const port = await startOnProxiedRedis();
    const printed = vi.spyOn(console, 'error');
    expect(await readyzBecomes(port, 200, 5_000)).toEqual({ status: 200, body: 'ready\n' });

    await proxy!.cut();
    const gone = await readyzBecomes(port, 503, 5_000);
    expect(gone.body).toMatch(/^not ready: store unreachable: .+\n$/);

    await proxy!.restore();
    expect(await readyzBecomes(port, 200, 15_000)).toEqual({ status: 200, body: 'ready\n' });
    await botAnswers('back');
    expect(printed.mock.calls.map((args) => String(args[0]))).toEqual([]);
  }, 40_000);
});
