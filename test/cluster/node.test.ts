/**
 * An instance's place on the shared Redis: a lease is held by one instance at
 * a time, for its TTL unless renewed, with a fencing token that only grows; an
 * instance that lost a lease can neither renew nor give up the new holder's;
 * the instances' messages reach every instance, whatever one listener does.
 */
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterNode, instanceIdOf, type ClusterMessage } from '../../src/cluster/node.js';
import { pino } from 'pino';
import { silentLogger, type Logger } from '../../src/log.js';
import { RedisConnections } from '../../src/store/redis-connections.js';
import { flushDb, holdRedisDb, testRedisDb } from '../e2e/cluster-harness.js';

// Database 2 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(2);
}, 900_000);
afterAll(() => releaseDb?.());

/** Database 2 of the test Redis, emptied before each test. */
const { available, skip, url } = testRedisDb(2);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function join(id: string, leaseTtlMs = 5_000, connections?: RedisConnections, log: Logger = silentLogger): Promise<ClusterNode> {
  const node = await ClusterNode.connect(url(), id, leaseTtlMs, log, connections);
  cleanups.push(() => node.close());
  return node;
}

async function until(check: () => boolean, what: string, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('instanceIdOf', () => {
  it('is the configured name, else the host name and process id', () => {
    expect(instanceIdOf('worker-1')).toBe('worker-1');
    expect(instanceIdOf(undefined)).toBe(`${hostname()}-${process.pid}`);
  });
});

describe.skipIf(!available)(`leases on Redis${skip}`, () => {
  it('is held by one instance at a time, for its TTL, and taken again with a larger fencing token', async () => {
    await flushDb(url());
    const a = await join('a', 5_000);
    const b = await join('b', 5_000);
    const first = await a.acquire('thread:x');
    expect(first).toEqual({ name: 'thread:x', holder: 'a#1' });
    expect(await a.redis.get(a.leaseKey('thread:x'))).toBe('a#1');
    expect(a.leaseKey('thread:x')).toBe('pincer:cluster:lease:thread:x');
    const ttl = await a.redis.pttl(a.leaseKey('thread:x'));
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
    expect(await b.acquire('thread:x')).toBeUndefined();
    // Another lease is another key, with its own tokens.
    expect(await b.acquire('thread:y')).toEqual({ name: 'thread:y', holder: 'b#1' });

    await a.resign(first!);
    expect(await a.redis.exists(a.leaseKey('thread:x'))).toBe(0);
    expect(await b.acquire('thread:x')).toEqual({ name: 'thread:x', holder: 'b#2' });
  });

  it('lasts the TTL asked for, and lapses after it', async () => {
    await flushDb(url());
    const a = await join('a', 5_000);
    const b = await join('b', 5_000);
    expect(await a.acquire('short', 200)).toEqual({ name: 'short', holder: 'a#1' });
    expect(await a.redis.pttl(a.leaseKey('short'))).toBeLessThanOrEqual(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await b.acquire('short')).toEqual({ name: 'short', holder: 'b#2' });
  });

  it('is renewed by its holder only: a lapsed holder can neither renew nor give up the new holder\'s lease', async () => {
    await flushDb(url());
    const a = await join('a', 300);
    const b = await join('b', 5_000);
    const lease = (await a.acquire('thread:x'))!;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await a.renew(lease, 5_000)).toBe(true);
    expect(await a.redis.pttl(a.leaseKey('thread:x'))).toBeGreaterThan(4_000);
    expect(await a.renew(lease)).toBe(true);
    const renewed = await a.redis.pttl(a.leaseKey('thread:x'));
    expect(renewed).toBeLessThanOrEqual(300);
    expect(renewed).toBeGreaterThan(0);

    // The lease lapses and b takes it: a's renewal and resignation change nothing.
    await a.redis.del(a.leaseKey('thread:x'));
    const taken = (await b.acquire('thread:x'))!;
    expect(await a.renew(lease, 60_000)).toBe(false);
    await a.resign(lease);
    expect(await b.redis.get(b.leaseKey('thread:x'))).toBe(taken.holder);
    expect(await b.redis.pttl(b.leaseKey('thread:x'))).toBeLessThanOrEqual(5_000);
    expect(await b.renew(taken)).toBe(true);
  });
});

describe.skipIf(!available)(`messages between instances${skip}`, () => {
  it('reach every instance, this one included, until a listener stops', async () => {
    await flushDb(url());
    const a = await join('a');
    const b = await join('b');
    const atA: ClusterMessage[] = [];
    const atB: ClusterMessage[] = [];
    const stopA = a.onMessage((message) => atA.push(message));
    b.onMessage((message) => atB.push(message));
    await a.publish({ type: 'poke', thread: 't1' });
    await until(() => atA.length === 1 && atB.length === 1, 'the poke on both instances');
    expect(atA).toEqual([{ type: 'poke', thread: 't1' }]);
    expect(atB).toEqual([{ type: 'poke', thread: 't1' }]);

    stopA();
    await b.publish({ type: 'stop', thread: 't1', by: 'Ada' });
    await until(() => atB.length === 2, 'the stop on b');
    expect(atB[1]).toEqual({ type: 'stop', thread: 't1', by: 'Ada' });
    expect(atA).toHaveLength(1);
  });

  it('skips a message that is not JSON, and a listener that throws does not keep the message from the others', async () => {
    await flushDb(url());
    const a = await join('a');
    const heard: ClusterMessage[] = [];
    a.onMessage(() => {
      throw new Error('listener failed');
    });
    a.onMessage((message) => heard.push(message));
    await a.redis.publish('pincer:cluster:bus', 'not json {');
    await a.publish({ type: 'settings' });
    await until(() => heard.length === 1, 'the settings message');
    expect(heard).toEqual([{ type: 'settings' }]);
  });

  it('tells the operator it joined, and about a message it could not read or a listener could not handle', async () => {
    await flushDb(url());
    const logged: { level: number; msg: string; instance?: string; leaseTtlMs?: number; type?: string; err?: { message: string } }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as (typeof logged)[number]) });
    const a = await join('a', 4_000, undefined, log);
    let handled = 0;
    a.onMessage(() => {
      throw new Error('listener failed');
    });
    a.onMessage(() => void (handled += 1));
    await a.redis.publish('pincer:cluster:bus', 'not json {');
    await a.publish({ type: 'settings' });
    await until(() => handled === 1, 'the settings message');
    expect(logged.map(({ level, msg, instance, leaseTtlMs, type, err }) => ({ level, msg, instance, leaseTtlMs, type, err: err?.message }))).toEqual([
      { level: 30, msg: 'joined the instances on the Redis store', instance: 'a', leaseTtlMs: 4_000, type: undefined, err: undefined },
      { level: 40, msg: 'cluster: a message that is not JSON was ignored', instance: undefined, leaseTtlMs: undefined, type: undefined, err: undefined },
      { level: 50, msg: 'cluster: a message was not handled', instance: undefined, leaseTtlMs: undefined, type: 'settings', err: 'listener failed' },
    ]);
  });

  it('stops listening on close; it leaves open the connections it was given, and closes those it made', async () => {
    await flushDb(url());
    const shared = await RedisConnections.open(url(), silentLogger);
    cleanups.push(() => shared.close());
    const guest = await join('guest', 5_000, shared);
    const owner = await join('owner');
    const heard: ClusterMessage[] = [];
    guest.onMessage((message) => heard.push(message));
    const seenByOwner: ClusterMessage[] = [];
    owner.onMessage((message) => seenByOwner.push(message));
    guest.close();
    guest.close();
    await owner.publish({ type: 'settings' });
    await until(() => seenByOwner.length === 1, 'the message at the other instance');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heard).toEqual([]);
    // The given connections still work, and no longer listen to the instances.
    expect(await shared.command.ping()).toBe('PONG');
    // Only the owner's subscriber is left on the instances' channel.
    const end = Date.now() + 3_000;
    let subscribers = 0;
    do {
      subscribers = Number(((await owner.redis.pubsub('NUMSUB', 'pincer:cluster:bus')) as [string, number])[1]);
    } while (subscribers !== 1 && Date.now() < end);
    expect(subscribers).toBe(1);

    owner.close();
    await until(() => owner.redis.status === 'end', 'the owner\'s own connection to close');
  });
});
