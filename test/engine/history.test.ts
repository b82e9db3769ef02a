/**
 * The thread-record cache: bounded by the estimated size of its records as
 * well as by their count, least recently used out first, and a record whose
 * write is still queued is not lost when it leaves.
 */
import { describe, expect, it } from 'vitest';
import type { ChatInfo } from '../../src/channels/types.js';
import { THREAD_CACHE_BYTES, ThreadHistory, recordBytes, type ThreadRecord } from '../../src/engine/history.js';
import type { ThreadDelta, ThreadStorage } from '../../src/engine/thread-storage.js';
import type { Store } from '../../src/store/store.js';

const chat = (id: string): ChatInfo => ({ channel: 'test', chatId: id, kind: 'dm', scope: 'global' });

/** Records kept as written (copies), every read counted; writes wait at a gate until released. */
class MemoryStorage implements ThreadStorage {
  readonly records = new Map<string, ThreadRecord>();
  readonly reads: string[] = [];
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open();
  }
  async read(key: string): Promise<ThreadRecord | undefined> {
    this.reads.push(key);
    const record = this.records.get(key);
    return record && structuredClone(record);
  }
  async write(key: string, record: ThreadRecord, _delta: ThreadDelta): Promise<void> {
    await this.gate;
    this.records.set(key, structuredClone(record));
  }
}

/** A third of the cache's bound in one message. */
const third = () => 'x'.repeat(Math.ceil(THREAD_CACHE_BYTES / 3));

const historyOver = (storage: ThreadStorage) => new ThreadHistory(undefined as unknown as Store, undefined, storage);

describe('ThreadHistory cache', () => {
  it('estimates a record from its texts', async () => {
    const history = historyOver(new MemoryStorage());
    const record = await history.load('test:a', chat('a'));
    const empty = recordBytes(record);
    record.messages = Array.from({ length: 10 }, () => ({ role: 'user' as const, content: 'a'.repeat(1000) }));
    expect(recordBytes(record) - empty).toBeGreaterThanOrEqual(10_000);
    expect(recordBytes(record) - empty).toBeLessThan(16_000);
  });

  it('evicts the least recently used records once their size passes the bound, though their count is small', async () => {
    const storage = new MemoryStorage();
    const history = historyOver(storage);
    for (const id of ['a', 'b', 'c']) {
      await history.update(`test:${id}`, chat(id), (record) => (record.messages = [{ role: 'user', content: third() }]));
    }
    // a, b and c hold the bound and a little more: a, the least recently used, went.
    expect(storage.reads).toEqual(['test:a', 'test:b', 'test:c']);
    await history.load('test:c', chat('c'));
    await history.load('test:b', chat('b'));
    expect(storage.reads).toHaveLength(3);
    const again = await history.load('test:a', chat('a'));
    expect(storage.reads).toEqual(['test:a', 'test:b', 'test:c', 'test:a']);
    expect(again.messages[0]?.content).toHaveLength(third().length);
    // Reading a back pushed c out, the least recently used now; b stays.
    await history.load('test:b', chat('b'));
    expect(storage.reads).toHaveLength(4);
    await history.load('test:c', chat('c'));
    expect(storage.reads).toHaveLength(5);
  });

  it('keeps a record larger than the bound while it is the one in use', async () => {
    const storage = new MemoryStorage();
    const history = historyOver(storage);
    await history.update('test:big', chat('big'), (record) => (record.messages = [{ role: 'user', content: third() + third() + third() + third() }]));
    await history.load('test:big', chat('big'));
    expect(storage.reads).toEqual(['test:big']);
  });

  it('loses no change of a record whose write is queued when its size pushes it out', async () => {
    const storage = new MemoryStorage();
    const history = historyOver(storage);
    storage.hold();
    // The first write waits; the second change queues behind it.
    await history.update('test:a', chat('a'), (record) => (record.messages = [{ role: 'user', content: 'first' }]), { wait: false });
    await history.update('test:a', chat('a'), (record) => record.messages.push({ role: 'assistant', content: third() }), { wait: false });
    for (const id of ['b', 'c', 'd']) await history.update(`test:${id}`, chat(id), (record) => (record.messages = [{ role: 'user', content: third() }]), { wait: false });
    const record = await history.load('test:a', chat('a'));
    expect(record.messages.map((message) => message.content?.length)).toEqual([5, third().length]);
    storage.release();
    await history.flush();
    expect(storage.records.get('test:a')?.messages).toHaveLength(2);
  });
});
