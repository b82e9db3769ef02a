/**
 * The thread log: a turn writes its tail segment and the head, a replaced
 * history is read back exactly, records of the first layout still read, and a
 * write cut short leaves the thread as it was.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatInfo } from '../../src/channels/types.js';
import { ThreadHistory, ThreadRecordSchema, zeroUsage, type ThreadRecord } from '../../src/engine/history.js';
import { KeyvThreadStorage, SEGMENT_SIZE } from '../../src/engine/thread-log.js';
import type { ThreadDelta, ThreadStorage } from '../../src/engine/thread-storage.js';
import type { ChatMessage } from '../../src/llm/types.js';
import type { Namespace, StoreWrite } from '../../src/store/store.js';
import { Store } from '../../src/store/store.js';

const chat: ChatInfo = { channel: 'test', chatId: 'dm-ada', kind: 'dm', scope: 'global' };
const KEY = 'test:dm-ada';

/**
 * The store's namespaces with every write recorded, and a namespace's next
 * write (or delete) made to fail on demand. Writes of several records are made
 * one by one in their order, as a store that cannot write them at once would.
 */
class MeteredStore {
  writes: { key: string; bytes: number }[] = [];
  readonly failNext = new Set<string>();
  readonly failNextDelete = new Set<string>();

  constructor(private readonly store: Store) {}

  namespace<S extends z.ZodType>(name: string, schema: S, version = 1): Namespace<z.infer<S>> {
    const inner = this.store.namespace(name, schema, version);
    return {
      ...inner,
      set: async (key, value, ttlMs) => {
        if (this.failNext.delete(name)) throw new Error(`${name} not written`);
        this.writes.push({ key: `${name}:${key}`, bytes: Buffer.byteLength(JSON.stringify({ v: version, data: value })) });
        await inner.set(key, value, ttlMs);
      },
      delete: async (key) => {
        if (this.failNextDelete.delete(name)) throw new Error(`${name} not deleted`);
        return inner.delete(key);
      },
    };
  }

  async setMany(writes: readonly StoreWrite[]): Promise<void> {
    for (const write of writes) {
      if (this.failNext.delete(write.namespace)) throw new Error(`${write.namespace} not written`);
      this.writes.push({ key: `${write.namespace}:${write.key}`, bytes: Buffer.byteLength(JSON.stringify(write.value)) });
      await this.store.setMany([write]);
    }
  }

  bytes(): number {
    return this.writes.reduce((sum, write) => sum + write.bytes, 0);
  }
}

const messages = (from: number, count: number): ChatMessage[] =>
  Array.from({ length: count }, (_, i) => (i % 2 ? { role: 'assistant', content: `answer ${from + i}` } : { role: 'user', content: `question ${from + i}` }));

const contents = (list: readonly ChatMessage[]) => list.map((message) => message.content);

let dir: string;
let store: Store;
let metered: MeteredStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pincer-thread-log-'));
  store = await Store.open({ dataDir: dir });
  metered = new MeteredStore(store);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A history over the metered store, as one process sees it. */
const historyOver = (storage: ThreadStorage = new KeyvThreadStorage(metered)) => new ThreadHistory(store, undefined, storage);

/** The thread as a process started now would read it. */
const readFresh = () => new KeyvThreadStorage(store).read(KEY);

/** The generation the thread's head points at. */
const generation = async () => (await store.namespace('thread-head', z.object({ generation: z.number() })).get(KEY))?.generation;

/** One turn: the record's messages replaced by a longer copy, as a turn saves them. */
async function turn(history: ThreadHistory, added: ChatMessage[]): Promise<ThreadRecord> {
  const record = await history.load(KEY, chat);
  record.messages = [...record.messages, ...added];
  return history.save(record);
}

describe('thread log', () => {
  it('writes only the tail segment and the head on an append, whatever the length', async () => {
    const history = historyOver();
    await turn(history, messages(0, 1_000));
    const current = await generation();
    const tail = (count: number) => Math.floor(count / SEGMENT_SIZE);
    const perTurn: number[] = [];
    for (let count = 1_000; count < 1_010; count += 2) {
      metered.writes = [];
      await turn(history, messages(count, 2));
      expect(metered.writes.map((write) => write.key).sort()).toEqual([`thread-head:${KEY}`, `thread-messages:${KEY}:${current}:${tail(count)}`]);
      perTurn.push(metered.bytes());
    }
    const whole = Buffer.byteLength(JSON.stringify({ v: 1, data: await history.get(KEY) }));
    const segment = Buffer.byteLength(JSON.stringify(messages(1_000, SEGMENT_SIZE)));
    for (const bytes of perTurn) {
      expect(bytes).toBeLessThan(segment + 1_000);
      expect(bytes * 10).toBeLessThan(whole);
    }
  });

  it('reads back exactly the new messages after a rewrite, and deletes the old ones', async () => {
    const history = historyOver();
    await turn(history, messages(0, 200));
    const old = await generation();
    const record = await history.load(KEY, chat);
    record.messages = messages(500, 3);
    await history.save(record);
    expect(contents((await readFresh())!.messages)).toEqual(['question 500', 'answer 501', 'question 502']);
    const segments = store.namespace('thread-messages', ThreadRecordSchema.shape.messages);
    for (let index = 0; index < 4; index++) expect(await segments.get(`${KEY}:${old}:${index}`)).toBeUndefined();
    expect(await segments.get(`${KEY}:${await generation()}:0`)).toHaveLength(3);
  });

  it('deletes a replaced generation on a later write when its deletion failed', async () => {
    const history = historyOver();
    await turn(history, messages(0, 200));
    const old = await generation();
    const record = await history.load(KEY, chat);
    record.messages = messages(500, 3);
    metered.failNextDelete.add('thread-messages');
    await history.save(record);
    const segments = store.namespace('thread-messages', ThreadRecordSchema.shape.messages);
    const left = async () => (await Promise.all([0, 1, 2, 3].map((index) => segments.get(`${KEY}:${old}:${index}`)))).filter(Boolean).length;
    expect(await left()).toBe(1);
    expect(contents((await readFresh())!.messages)).toEqual(contents(messages(500, 3)));
    await turn(history, messages(503, 2));
    expect(await left()).toBe(0);
    expect(contents((await readFresh())!.messages)).toEqual(contents([...messages(500, 3), ...messages(503, 2)]));
  });

  it('reads a record of the first layout and moves it to the log on the next write', async () => {
    const legacy = store.namespace('thread', ThreadRecordSchema, 1);
    await legacy.set(KEY, { key: KEY, chat, messages: messages(0, 100), groupContext: [], usage: zeroUsage(), turns: 50, lastIteration: 1, updatedAt: 1, inbox: [] });
    const history = historyOver();
    expect(contents((await history.load(KEY, chat)).messages)).toEqual(contents(messages(0, 100)));
    await turn(history, messages(100, 2));
    expect(await legacy.get(KEY)).toBeUndefined();
    const read = (await readFresh())!;
    expect(contents(read.messages)).toEqual(contents(messages(0, 102)));
    expect(read.turns).toBe(50);
    // Then an append again.
    metered.writes = [];
    await turn(history, messages(102, 2));
    expect(metered.writes).toHaveLength(2);
  });

  it('round-trips a thread of 1,000 messages in order', async () => {
    const history = historyOver();
    for (let count = 0; count < 1_000; count += 40) await turn(history, messages(count, 40));
    const read = (await readFresh())!;
    expect(read.messages).toHaveLength(1_000);
    expect(contents(read.messages)).toEqual(contents(messages(0, 1_000)));
  });

  it('leaves the previous thread readable when the head write fails after the segments', async () => {
    const history = historyOver();
    await turn(history, messages(0, 100));
    metered.failNext.add('thread-head');
    await expect(turn(history, messages(100, 50))).rejects.toThrow('thread-head not written');
    // The segments past the head's count were written; the head still counts 100.
    const written = `thread-messages:${KEY}:${await generation()}:2`;
    expect(metered.writes.some((write) => write.key === written)).toBe(true);
    expect(contents((await readFresh())!.messages)).toEqual(contents(messages(0, 100)));
    // The next write goes on from what is stored.
    await turn(history, messages(150, 2));
    expect(contents((await readFresh())!.messages)).toEqual(contents([...messages(0, 100), ...messages(100, 50), ...messages(150, 2)]));
  });

  it('leaves the previous thread readable when a rewrite fails before its head', async () => {
    const history = historyOver();
    await turn(history, messages(0, 100));
    const record = await history.load(KEY, chat);
    record.messages = messages(900, 5);
    metered.failNext.add('thread-head');
    await expect(history.save(record)).rejects.toThrow();
    expect(contents((await readFresh())!.messages)).toEqual(contents(messages(0, 100)));
    await turn(history, messages(905, 1));
    expect(contents((await readFresh())!.messages)).toEqual(contents([...messages(900, 5), ...messages(905, 1)]));
  });

  it('reads what another process wrote once the thread is forgotten', async () => {
    const mine = historyOver();
    const theirs = historyOver(new KeyvThreadStorage(store));
    await turn(mine, messages(0, 10));
    await turn(theirs, messages(10, 2));
    await turn(theirs, messages(12, 2));
    expect((await mine.load(KEY, chat)).messages).toHaveLength(10);
    mine.forget(KEY);
    expect((await mine.load(KEY, chat)).messages).toHaveLength(14);
    await turn(mine, messages(14, 2));
    expect(contents((await readFresh())!.messages)).toEqual(contents(messages(0, 16)));
  });
});

describe('thread history deltas', () => {
  /** Records each write's delta; the first write waits until `release` is called. */
  class GatedStorage implements ThreadStorage {
    readonly deltas: ThreadDelta[] = [];
    release!: () => void;
    private readonly gate = new Promise<void>((resolve) => (this.release = resolve));
    private readonly inner = new KeyvThreadStorage(metered);

    read(key: string) {
      return this.inner.read(key);
    }

    async write(key: string, record: ThreadRecord, delta: ThreadDelta) {
      this.deltas.push(delta);
      if (this.deltas.length === 1) await this.gate;
      await this.inner.write(key, record, delta);
    }
  }

  it('takes the delta of a coalesced write when it starts, against what was last written', async () => {
    const storage = new GatedStorage();
    const history = historyOver(storage);
    await history.update(KEY, chat, (record) => record.messages.push(...messages(0, 10)), { wait: false });
    // Queued behind the first write, and joined into one.
    await history.update(KEY, chat, (record) => record.messages.push(...messages(10, 2)), { wait: false });
    await history.update(KEY, chat, (record) => record.messages.push(...messages(12, 2)), { wait: false });
    storage.release();
    await history.flush();
    expect(storage.deltas.map(({ from, rewrite }) => ({ from, rewrite }))).toEqual([
      { from: 0, rewrite: false },
      { from: 10, rewrite: false },
    ]);
    // A replaced history, even with a longer one, is a rewrite.
    await history.update(KEY, chat, (record) => (record.messages = messages(100, 20)));
    expect(storage.deltas.at(-1)).toMatchObject({ from: 0, rewrite: true });
    expect(contents((await readFresh())!.messages)).toEqual(contents(messages(100, 20)));
  });

  it('names the inbox messages a write takes out', async () => {
    const storage = new GatedStorage();
    storage.release();
    const history = historyOver(storage);
    const queued = (id: string) => ({ id, messageId: id, sender: { id: 'ada', name: 'Ada' }, text: id, receivedAt: 1, mentionsBot: false, replyToBot: false, attachments: [] });
    await history.update(KEY, chat, (record) => record.inbox.push(queued('a'), queued('b')));
    const record = await history.load(KEY, chat);
    record.messages = [...record.messages, ...messages(0, 2)];
    await history.save(record, { consumed: ['a'] });
    expect(storage.deltas.at(-1)).toEqual({ from: 0, rewrite: false, consumed: ['a'] });
    expect((await readFresh())!.inbox.map((message) => message.id)).toEqual(['b']);
  });

  it('names the inbox messages a queued write takes out when its thread left the cache while it waited', async () => {
    const storage = new GatedStorage();
    const history = historyOver(storage);
    const queued = (id: string) => ({ id, messageId: id, sender: { id: 'ada', name: 'Ada' }, text: id, receivedAt: 1, mentionsBot: false, replyToBot: false, attachments: [] });
    // The first write waits at the gate; the turn's save queues behind it.
    await history.update(KEY, chat, (record) => record.inbox.push(queued('a'), queued('b')), { wait: false });
    const record = await history.load(KEY, chat);
    record.messages = [...record.messages, ...messages(0, 2)];
    await history.save(record, { wait: false, consumed: ['a'] });
    // Enough other threads to push this one out of the cache meanwhile.
    for (let other = 0; other < 2_000; other++) await history.load(`test:dm-${other}`, { ...chat, chatId: `dm-${other}` });
    storage.release();
    await history.flush();
    // Without what was written, the queued write would take nothing out of an inbox kept apart (Redis), and `a` would be answered again.
    expect(storage.deltas.at(-1)).toEqual({ from: 0, rewrite: false, consumed: ['a'] });
    expect((await readFresh())!.inbox.map((message) => message.id)).toEqual(['b']);
    expect(Reflect.get(history, 'written').has(KEY)).toBe(false);
  });
});
