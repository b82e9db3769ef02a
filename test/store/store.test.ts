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
