/**
 * The store's records on SQLite keep `@keyv/sqlite`'s layout: a data folder
 * written before the store kept its statements prepared reads the same after,
 * and the other way round, expiry and deletes included.
 */
import KeyvSqlite from '@keyv/sqlite';
import Keyv from 'keyv';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqliteKeyvStore } from '../../src/store/sqlite-keyv.js';
import { Store } from '../../src/store/store.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-sqlite-keyv-'));
  folders.push(dir);
  return dir;
}

/** A keyv over `@keyv/sqlite` set up as the store set it up before. */
function formerStore(path: string): Keyv {
  return new Keyv({ store: new KeyvSqlite({ uri: `sqlite://${path}` }), namespace: 'pincer', useKeyPrefix: false, serialize: (data) => JSON.stringify(data), deserialize: (text) => JSON.parse(text) as never });
}

const Counter = z.object({ n: z.number() });

describe('records on SQLite', () => {
  it("read and write the same rows as @keyv/sqlite's, expiry included", async () => {
    const dir = dataDir();
    const path = join(dir, 'pincer.sqlite');
    const former = formerStore(path);
    await former.set('counters:old', { v: 1, data: { n: 1 } });
    await former.set('counters:brief', { v: 1, data: { n: 9 } }, 1);
    await former.disconnect();

    const store = await Store.open({ dataDir: dir });
    const counters = store.namespace('counters', Counter);
    expect(await counters.get('old')).toEqual({ n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await counters.get('brief')).toBeUndefined();
    await counters.set('new', { n: 2 });
    await counters.set('later', { n: 3 }, 60_000);
    expect(await counters.delete('old')).toBe(true);
    expect(await counters.delete('old')).toBe(false);
    await store.close();

    const again = formerStore(path);
    expect(await again.get('counters:new')).toEqual({ v: 1, data: { n: 2 } });
    expect(await again.get('counters:later')).toEqual({ v: 1, data: { n: 3 } });
    expect(await again.get('counters:old')).toBeUndefined();
    await again.disconnect();
  });

  it('keeps every one of many writes made at once, to the same keys and to different ones', async () => {
    const store = await Store.open({ dataDir: dataDir() });
    const counters = store.namespace('counters', Counter);
    await Promise.all(Array.from({ length: 200 }, (_, n) => counters.set(`k${n % 50}`, { n })));
    await Promise.all(Array.from({ length: 20 }, () => counters.update('total', (current) => ({ n: (current?.n ?? 0) + 1 }))));
    expect(await counters.get('k7')).toEqual({ n: 157 });
    expect(await counters.get('total')).toEqual({ n: 20 });
    await store.close();
  });

  it('answers a read of a closed database with an error, not a hang', async () => {
    const adapter = await SqliteKeyvStore.open(join(dataDir(), 'x.sqlite'));
    await adapter.set('a', '1');
    expect(await adapter.get('a')).toBe('1');
    expect(await adapter.has('a')).toBe(true);
    await adapter.disconnect();
    await expect(adapter.get('a')).rejects.toThrow(/closed|SQLITE_MISUSE/i);
  });
});
