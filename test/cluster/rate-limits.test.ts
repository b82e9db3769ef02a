/**
 * Tools' rate limits counted in Redis: two instances (two connections) share
 * one count, and a refusal says how long to wait, as the in-memory limiter does.
 * Waits are checked against the time the test itself took, not a fixed margin:
 * a slow machine makes them shorter, never wrong.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisRateLimiter, RedisSharedBudget } from '../../src/cluster/rate-limits.js';
import { MessagePacer, type PacingClock } from '../../src/channels/telegram/pacing.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';

/** Database 8 of the test Redis: this suite's own. */
const { available, skip, url } = testRedisDb(8);
/** Redis's clock and this process's each round down to the millisecond. */
const ROUNDING_MS = 2;

const connections: Redis[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((redis) => redis.quit()));
});

async function twoConnections(): Promise<[Redis, Redis]> {
  await flushDb(url());
  const [a, b] = [new Redis(url()), new Redis(url())];
  connections.push(a, b);
  return [a, b];
}

async function twoLimiters(): Promise<[RedisRateLimiter, RedisRateLimiter]> {
  const [a, b] = await twoConnections();
  return [new RedisRateLimiter(a), new RedisRateLimiter(b)];
}

describe.skipIf(!available)(`tool rate limits on Redis${skip}`, () => {
  it('counts the calls of every instance against one limit per minute', async () => {
    const [a, b] = await twoLimiters();
    const limit = { perMinute: 3 };
    const started = Date.now();
    const outcomes = [await a.take('u1\u0000fetch', limit), await b.take('u1\u0000fetch', limit), await a.take('u1\u0000fetch', limit), await b.take('u1\u0000fetch', limit)];
    const elapsed = Date.now() - started;
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, true, false]);
    const refused = outcomes[3]!;
    if (refused.ok) throw new Error('expected a refusal');
    expect(refused).toMatchObject({ limit: 3, window: 'minute' });
    // The minute of the first call: what is left of it once the refusal came.
    expect(refused.retryAfterMs).toBeGreaterThanOrEqual(60_000 - elapsed - ROUNDING_MS);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
    // Another user, or another tool, has a count of its own.
    expect(await b.take('u2\u0000fetch', limit)).toEqual({ ok: true });
    expect(await b.take('u1\u0000shell', limit)).toEqual({ ok: true });
  });

  it('applies the hourly limit when the minute allows the call', async () => {
    const [a, b] = await twoLimiters();
    const limit = { perMinute: 10, perHour: 2 };
    expect((await a.take('u1\u0000fetch', limit)).ok).toBe(true);
    expect((await b.take('u1\u0000fetch', limit)).ok).toBe(true);
    expect(await a.take('u1\u0000fetch', limit)).toMatchObject({ ok: false, limit: 2, window: 'hour' });
  });
});

describe.skipIf(!available)(`Telegram's overall message limit shared on Redis${skip}`, () => {
  it('books the starts of every instance against one limit', async () => {
    const [a, b] = (await twoConnections()).map((redis) => new RedisSharedBudget(redis));
    const waits: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 6; i += 1) waits.push(await (i % 2 === 0 ? a! : b!).reserve('telegram:messages', 3, 60_000));
    const elapsed = Date.now() - started;
    expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
    // Each later start waits for the period that began with the first three, less the time gone since.
    for (const wait of waits.slice(3)) {
      expect(wait).toBeGreaterThanOrEqual(60_000 - elapsed - ROUNDING_MS);
      expect(wait).toBeLessThanOrEqual(60_000);
    }
  });

  it('makes two pacers (two instances) send no more than the limit a period together', async () => {
    const [a, b] = (await twoConnections()).map((redis) => new RedisSharedBudget(redis));
    const limits = { chatIntervalMs: 0, groupLimit: 100, groupPeriodMs: 60_000, globalLimit: 4, globalPeriodMs: 60_000 };
    // The pacers' waits are recorded and not slept: what they were told to wait is the outcome.
    const held: number[] = [];
    const clock: PacingClock = { now: () => performance.now(), sleep: async (ms) => void held.push(ms) };
    const pacers = [new MessagePacer(limits, clock, a), new MessagePacer(limits, clock, b)];
    const started = Date.now();
    const sent = await Promise.all(Array.from({ length: 8 }, (_, i) => pacers[i % 2]!.run(`chat-${i}`, async () => i)));
    const elapsed = Date.now() - started;
    expect(sent.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Four go at once; the next four wait for the period, whichever instance sends them.
    expect(held).toHaveLength(4);
    for (const wait of held) {
      expect(wait).toBeGreaterThanOrEqual(60_000 - elapsed - ROUNDING_MS);
      expect(wait).toBeLessThanOrEqual(60_000);
    }
  });
});
