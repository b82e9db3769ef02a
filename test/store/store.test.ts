import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Store } from '../../src/store/store.js';

const Item = z.object({ name: z.string(), count: z.number() });

interface Backend {
  name: string;
  url?: string;
  skip?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'pincer-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const backends: Backend[] = [
  { name: 'sqlite', url: `sqlite://${join(dir, 'contract.sqlite')}` },
  process.env.PINCER_TEST_REDIS_URL
    ? { name: 'redis', url: process.env.PINCER_TEST_REDIS_URL }
    : { name: 'redis', skip: 'PINCER_TEST_REDIS_URL is not set' },
  process.env.PINCER_TEST_POSTGRES_URL
    ? { name: 'postgres', url: process.env.PINCER_TEST_POSTGRES_URL }
    : { name: 'postgres', skip: 'PINCER_TEST_POSTGRES_URL is not set' },
];

for (const backend of backends) {
  describe.skipIf(Boolean(backend.skip))(`store contract on ${backend.name}${backend.skip ? ` (skipped: ${backend.skip})` : ''}`, () => {
    const open = () => Store.open({ url: backend.url! });
    const unique = `${backend.name}-${process.pid}-${Date.now()}`;

    it('writes and reads back a record after reopening', async () => {
      const first = await open();
      await first.namespace(`items-${unique}`, Item).set('a', { name: 'apple', count: 3 });
      await first.close();
      const second = await open();
      expect(await second.namespace(`items-${unique}`, Item).get('a')).toEqual({ name: 'apple', count: 3 });
      await second.close();
    });

    it('returns undefined for a missing key and deletes', async () => {
      const store = await open();
      const items = store.namespace(`del-${unique}`, Item);
      expect(await items.get('missing')).toBeUndefined();
      await items.set('x', { name: 'x', count: 1 });
      expect(await items.delete('x')).toBe(true);
      expect(await items.get('x')).toBeUndefined();
      await store.close();
    });

    it('sets a corrupt record aside instead of crashing', async () => {
      const store = await open();
      const loose = store.namespace(`corrupt-${unique}`, z.unknown());
      await loose.set('bad', { name: 42 });
      const strict = store.namespace(`corrupt-${unique}`, Item);
      expect(await strict.get('bad')).toBeUndefined();
      // Once set aside, the bad record is gone from its key.
      expect(await loose.get('bad')).toBeUndefined();
      await store.close();
    });

    it('treats a record of another schema version as corrupt', async () => {
      const store = await open();
      await store.namespace(`ver-${unique}`, Item, 1).set('k', { name: 'v1', count: 1 });
      expect(await store.namespace(`ver-${unique}`, Item, 2).get('k')).toBeUndefined();
      await store.close();
    });

    it('serialises concurrent updates of one key', async () => {
      const store = await open();
      const items = store.namespace(`upd-${unique}`, Item);
      await Promise.all(
        Array.from({ length: 50 }, () => items.update('n', (current) => ({ name: 'n', count: (current?.count ?? 0) + 1 }))),
      );
      expect((await items.get('n'))?.count).toBe(50);
      await store.close();
    });

    it('writes several records in one setMany, a ttl kept, and the last write of a key winning', async () => {
      const store = await open();
      const items = store.namespace(`many-${unique}`, Item);
      const others = store.namespace(`many-others-${unique}`, Item);
      await store.setMany([items.entry('a', { name: 'a', count: 1 }), others.entry('b', { name: 'b', count: 2 }), items.entry('brief', { name: 'brief', count: 3 }, 50), items.entry('a', { name: 'a', count: 4 })]);
      expect(await items.get('a')).toEqual({ name: 'a', count: 4 });
      expect(await others.get('b')).toEqual({ name: 'b', count: 2 });
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(await items.get('brief')).toBeUndefined();
      await store.setMany([]);
      await store.close();
    });

    it('writes the records given to update with the updated one, also when it is deleted', async () => {
      const store = await open();
      const items = store.namespace(`also-${unique}`, Item);
      const log = store.namespace(`also-log-${unique}`, Item);
      await items.update('n', () => ({ name: 'n', count: 1 }), [log.entry('1', { name: 'one', count: 1 })]);
      expect(await log.get('1')).toEqual({ name: 'one', count: 1 });
      expect(await items.get('n')).toEqual({ name: 'n', count: 1 });
      await items.update('n', () => undefined, [log.entry('2', { name: 'two', count: 2 })]);
      expect(await items.get('n')).toBeUndefined();
      expect(await log.get('2')).toEqual({ name: 'two', count: 2 });
      await store.close();
    });

    it('a namespace that holds records answers with what it last updated, and a copy of it', async () => {
      const store = await open();
      const items = store.namespace(`held-${unique}`, Item, 1, { hold: 2 });
      const plain = store.namespace(`held-${unique}`, Item);
      const updated = await items.update('h', () => ({ name: 'h', count: 1 }));
      updated!.count = 99;
      const read = await items.get('h');
      expect(read).toEqual({ name: 'h', count: 1 });
      read!.count = 98;
      expect(await items.update('h', (current) => ({ name: 'h', count: current!.count + 1 }))).toEqual({ name: 'h', count: 2 });
      expect(await plain.get('h')).toEqual({ name: 'h', count: 2 });
      // A plain write of the record is what the next update starts from.
      await items.set('h', { name: 'h', count: 10 });
      expect(await items.update('h', (current) => ({ name: 'h', count: current!.count + 1 }))).toEqual({ name: 'h', count: 11 });
      await items.delete('h');
      expect(await items.get('h')).toBeUndefined();
      await store.close();
    });

    it('expires a record written with a ttl', async () => {
      const store = await open();
      const items = store.namespace(`ttl-${unique}`, Item);
      await items.set('t', { name: 't', count: 1 }, 50);
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(await items.get('t')).toBeUndefined();
      await store.close();
    });
  });
}

describe('one instance per store', () => {
  it('a second store on the same SQLite file in another process is refused; this process may reopen its own', async () => {
    const file = join(dir, 'locked.sqlite');
    const first = await Store.open({ url: `sqlite://${file}` });
    // The lock names this process: a second open here shares it (tests and tools reopen stores).
    const again = await Store.open({ url: `sqlite://${file}` });
    await again.close();
    await first.close();
  });

  it.skipIf(!process.env.PINCER_TEST_POSTGRES_URL)(
    `a second instance on the same Postgres database is refused until the first closes${process.env.PINCER_TEST_POSTGRES_URL ? '' : ' (skipped: PINCER_TEST_POSTGRES_URL is not set)'}`,
    async () => {
      const url = process.env.PINCER_TEST_POSTGRES_URL!;
      const first = await Store.open({ url });
      await expect(Store.open({ url })).rejects.toThrow(/another pincer instance is using this Postgres database; one instance per Postgres database/);
      await first.close();
      const second = await Store.open({ url });
      await second.close();
    },
  );
});

describe('store URLs', () => {
  it('refuses an unknown scheme with a clear message', async () => {
    await expect(Store.open({ url: 'mongodb://x' })).rejects.toThrow(/unsupported store URL scheme "mongodb"/);
  });
});
