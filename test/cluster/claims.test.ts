/**
 * Claims on a shared Redis store: the atomic test-and-set that makes a routine firing run once across
 * instances. Two instances racing for a firing: exactly one wins; another firing, or another routine at the
 * same time, is a claim of its own; a claim reports its expiry while it stands and none once Redis dropped it.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisClaims } from '../../src/cluster/claims.js';
import { FIRING_CLAIMS, firingId } from '../../src/routines/claims.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';

/** Database 12 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url } = testRedisDb(1);

describe.skipIf(!available)(`firing claims on Redis${skip}`, () => {
  const clients: Redis[] = [];
  const connect = () => {
    const client = new Redis(url(), { maxRetriesPerRequest: 1 });
    clients.push(client);
    return client;
  };
  beforeEach(async () => {
    await flushDb(url());
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.disconnect();
  });

  it('two instances racing for one firing: exactly one wins, on each try', async () => {
    const [a, b] = [new RedisClaims(connect(), FIRING_CLAIMS, 60_000), new RedisClaims(connect(), FIRING_CLAIMS, 60_000)];
    const id = firingId('r1', Date.UTC(2026, 0, 5, 9));
    const results = await Promise.all([a.claim('r1', id), b.claim('r1', id), a.claim('r1', id), b.claim('r1', id)]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('another firing of the routine, and another routine at the same time, are claims of their own', async () => {
    const claims = new RedisClaims(connect(), FIRING_CLAIMS, 60_000);
    const [nine, ten] = [Date.UTC(2026, 0, 5, 9), Date.UTC(2026, 0, 5, 10)];
    expect(await claims.claim('r1', firingId('r1', nine))).toBe(true);
    expect(await claims.claim('r1', firingId('r1', ten))).toBe(true);
    expect(await claims.claim('r2', firingId('r2', nine))).toBe(true);
    expect(await claims.claim('r1', firingId('r1', nine))).toBe(false);
  });

  it('keeps the claims of one kind apart from another kind of the same key', async () => {
    const client = connect();
    expect(await new RedisClaims(client, FIRING_CLAIMS, 60_000).claim('x', 'x_1')).toBe(true);
    expect(await new RedisClaims(client, 'other-claims', 60_000).claim('x', 'x_1')).toBe(true);
    expect(await client.exists(`pincer:${FIRING_CLAIMS}:x_1`)).toBe(1);
  });

  it('a standing claim reports when it expires; an unknown or dropped one reports none', async () => {
    const claims = new RedisClaims(connect(), FIRING_CLAIMS, 60_000);
    expect(await claims.expiresAt('r1', 'r1_1')).toBeUndefined();
    const before = Date.now();
    await claims.claim('r1', 'r1_1');
    const expires = await claims.expiresAt('r1', 'r1_1');
    expect(expires).toBeGreaterThan(before + 55_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 60_000);
    const short = new RedisClaims(connect(), FIRING_CLAIMS, 50);
    expect(await short.claim('r1', 'r1_2')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await short.expiresAt('r1', 'r1_2')).toBeUndefined();
    expect(await short.claim('r1', 'r1_2')).toBe(true);
  });
});
