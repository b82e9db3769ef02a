/**
 * The store's records on Redis keep `@keyv/redis`'s layout: what an instance
 * wrote before the store went over to the instance's shared connection reads
 * the same after, and the other way round, TTLs included.
 */
import KeyvRedis from '@keyv/redis';
import Keyv from 'keyv';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Store } from '../../src/store/store.js';

const url = process.env.PINCER_TEST_REDIS_URL;

/** A keyv over `@keyv/redis` set up as the store set it up before. */
function formerStore(): Keyv {
  return new Keyv({ store: new KeyvRedis(url!), namespace: 'pincer', useKeyPrefix: false, serialize: (data) => JSON.stringify(data), deserialize: (text) => JSON.parse(text) as never });
}

describe.skipIf(!url)(`records on Redis${url ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)'}`, () => {
  it("read and write the same keys and values as @keyv/redis's", async () => {
    const name = `layout-${process.pid}-${Date.now()}`;
    const former = formerStore();
    await former.set(`${name}:old`, { v: 1, data: { n: 1 } });
    const store = await Store.open({ url: url! });
    const records = store.namespace(name, z.object({ n: z.number() }));
    expect(await records.get('old')).toEqual({ n: 1 });
    await records.set('new', { n: 2 }, 60_000);
    expect(await former.get(`${name}:new`)).toEqual({ v: 1, data: { n: 2 } });
    expect(await records.delete('old')).toBe(true);
    expect(await former.get(`${name}:old`)).toBeUndefined();
    const ttl = await store.redis!.command.pttl(`pincer::${name}:new`);
    expect(ttl).toBeGreaterThan(50_000);
    await records.delete('new');
    await store.close();
    await former.disconnect();
  });
});
