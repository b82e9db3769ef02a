/**
 * A thread's record on the cluster's Redis: a thread kept by a single instance
 * before it joined a cluster is read from there once and then written here in
 * full; a turn appends only its new messages; a record that no longer parses
 * is ignored rather than handed to the turn; a write is fenced by the lease.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChatInfo } from '../../src/channels/types.js';
import { ClusterNode } from '../../src/cluster/node.js';
import { leaseNameOf, RedisThreadStorage, threadKeys, type InboxEntry } from '../../src/cluster/thread-storage.js';
import { ClusterThreads } from '../../src/cluster/threads.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { zeroUsage, type QueuedMessage, type ThreadRecord } from '../../src/engine/history.js';
import { KeyvThreadStorage } from '../../src/engine/thread-log.js';
import { pino } from 'pino';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';
import { flushDb, holdRedisDb, testRedisDb } from '../e2e/cluster-harness.js';

// Database 2 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(2);
}, 900_000);
afterAll(() => releaseDb?.());

/** Database 2 of the test Redis, emptied before each test. */
const { available, skip, url } = testRedisDb(2);

const dir = mkdtempSync(join(tmpdir(), 'pincer-thread-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const CHAT: ChatInfo = { channel: 'test', chatId: 'c1', kind: 'dm', scope: 'global' };
const THREAD = 'test:c1';

const said = (content: string): ChatMessage => ({ role: 'user', content });

function recordOf(messages: ChatMessage[], inbox: QueuedMessage[] = []): ThreadRecord {
  return { key: THREAD, chat: CHAT, messages, groupContext: [], usage: zeroUsage(), turns: messages.length, lastIteration: 0, updatedAt: 1, inbox };
}

function queued(id: string, text: string): QueuedMessage {
  return { id, messageId: id, sender: { id: 'ada', name: 'Ada' }, text, receivedAt: 1, mentionsBot: true, replyToBot: false, attachments: [] };
}

/** A line the storage logged for the operator. */
interface Logged {
  level: number;
  msg: string;
  thread?: string;
  reason?: string;
}

let files = 0;

/** A storage on an emptied database; `previous` is the store of the single instance it was before. */
async function rig(): Promise<{ storage: RedisThreadStorage; previous: KeyvThreadStorage; node: ClusterNode; threads: ClusterThreads; logged: Logged[] }> {
  await flushDb(url());
  const node = await ClusterNode.connect(url(), 'a', 2_000, silentLogger);
  const threads = new ClusterThreads(node, silentLogger);
  const store = await Store.open({ url: `sqlite://${join(dir, `single-${++files}.sqlite`)}` });
  cleanups.push(() => node.close(), () => threads.close(), () => store.close());
  const previous = new KeyvThreadStorage(store, silentLogger);
  const logged: Logged[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as Logged) });
  return { storage: new RedisThreadStorage(node, threads, log, previous), previous, node, threads, logged };
}

const texts = (record: ThreadRecord | undefined): unknown[] | undefined => record?.messages.map((message) => message.content);

describe.skipIf(!available)(`thread records on Redis${skip}`, () => {
  it('reads a thread kept before the cluster, with the inbox waiting on Redis, and writes all its messages on its first write here', async () => {
    const { storage, previous, node } = await rig();
    await previous.write(THREAD, recordOf([said('one'), said('two')]), { from: 0, rewrite: true, consumed: [] });
    await node.redis.rpush(threadKeys(THREAD).inbox, JSON.stringify({ chat: CHAT, message: queued('9', 'waiting') } satisfies InboxEntry));

    const read = await storage.read(THREAD);
    expect(texts(read)).toEqual(['one', 'two']);
    expect(read?.inbox.map((message) => message.text)).toEqual(['waiting']);

    // The turn adds one message and says only it is new; the cluster store has none of the earlier ones yet.
    await storage.write(THREAD, recordOf([said('one'), said('two'), said('three')]), { from: 2, rewrite: false, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['one', 'two', 'three']);

    // From then on, only the new messages are appended.
    await storage.write(THREAD, recordOf([said('one'), said('two'), said('three'), said('four')]), { from: 3, rewrite: false, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['one', 'two', 'three', 'four']);
    expect(await node.redis.llen(threadKeys(THREAD).log)).toBe(4);
  });

  it('appends only the new messages of a turn, replaces them all on a rewrite, and takes the consumed ones out of the inbox', async () => {
    const { storage, node } = await rig();
    const keys = threadKeys(THREAD);
    await node.redis.rpush(keys.inbox, ...['1', '2'].map((id) => JSON.stringify({ chat: CHAT, message: queued(id, `m${id}`) } satisfies InboxEntry)));
    await storage.write(THREAD, recordOf([said('m1')]), { from: 0, rewrite: false, consumed: ['1'] });
    await storage.write(THREAD, recordOf([said('m1'), said('answer')]), { from: 1, rewrite: false, consumed: [] });
    const read = await storage.read(THREAD);
    expect(texts(read)).toEqual(['m1', 'answer']);
    expect(read?.inbox.map((message) => message.text)).toEqual(['m2']);

    await storage.write(THREAD, recordOf([said('summary')]), { from: 0, rewrite: true, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['summary']);
  });

  it('has no record for a thread never written, and one with no history for a thread whose first messages wait in its inbox', async () => {
    const { storage, node } = await rig();
    expect(await storage.read(THREAD)).toBeUndefined();
    await node.redis.rpush(threadKeys(THREAD).inbox, JSON.stringify({ chat: CHAT, message: queued('1', 'hello') } satisfies InboxEntry));
    const read = await storage.read(THREAD);
    expect(read).toMatchObject({ key: THREAD, chat: CHAT, messages: [], turns: 0 });
    expect(read?.inbox.map((message) => message.text)).toEqual(['hello']);
  });

  it('ignores a stored record that no longer parses, rather than handing it to a turn, and tells the operator why', async () => {
    const { storage, node, logged } = await rig();
    await storage.write(THREAD, recordOf([said('one')]), { from: 0, rewrite: false, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['one']);
    await node.redis.set(threadKeys(THREAD).head, JSON.stringify({ key: THREAD, chat: CHAT }));
    expect(await storage.read(THREAD)).toBeUndefined();
    // The first three of the five problems, each with where it is.
    expect(logged).toEqual([{ ...logged[0], level: 50, msg: 'cluster: a corrupt thread record was ignored', thread: THREAD, reason: expect.stringMatching(/^groupContext: [^;]+; usage: [^;]+; turns: [^;]+$/) }]);
  });

  it('names a bad field inside the record by its whole path in the operator\'s log line', async () => {
    const { storage, node, logged } = await rig();
    await storage.write(THREAD, recordOf([said('one')]), { from: 0, rewrite: false, consumed: [] });
    const head = JSON.parse((await node.redis.get(threadKeys(THREAD).head))!) as { chat: Record<string, unknown> };
    await node.redis.set(threadKeys(THREAD).head, JSON.stringify({ ...head, chat: { ...head.chat, chatId: 5 } }));
    expect(await storage.read(THREAD)).toBeUndefined();
    expect(logged.map((line) => line.reason)).toEqual([expect.stringMatching(/^chat\.chatId: [^;]+$/)]);
  });

  it('has no record of an unknown thread when there was no store before the cluster', async () => {
    const { node, threads } = await rig();
    const storage = new RedisThreadStorage(node, threads, silentLogger);
    expect(await storage.read(THREAD)).toBeUndefined();
    await storage.write(THREAD, recordOf([said('one')]), { from: 0, rewrite: false, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['one']);
  });

  it('keeps threads apart, and reads an inbox in the order the person wrote it', async () => {
    const { storage, node } = await rig();
    const other = 'test:c2';
    await storage.write(THREAD, recordOf([said('for c1')]), { from: 0, rewrite: false, consumed: [] });
    await storage.write(other, { ...recordOf([said('for c2')]), key: other, chat: { ...CHAT, chatId: 'c2' } }, { from: 0, rewrite: false, consumed: [] });
    // Telegram ids, stored late one first: 9 was written before 10.
    await node.redis.rpush(threadKeys(other).inbox, ...['10', '9', '11'].map((id) => JSON.stringify({ chat: { ...CHAT, chatId: 'c2' }, message: queued(id, `m${id}`) } satisfies InboxEntry)));
    expect(texts(await storage.read(THREAD))).toEqual(['for c1']);
    expect((await storage.read(THREAD))?.inbox).toEqual([]);
    const read = await storage.read(other);
    expect(read).toMatchObject({ key: other, chat: { chatId: 'c2' } });
    expect(texts(read)).toEqual(['for c2']);
    expect(read?.inbox.map((message) => message.text)).toEqual(['m9', 'm10', 'm11']);
  });

  it('refuses to read a thread whose keys hold something else, rather than reading it as empty', async () => {
    const { storage, node } = await rig();
    await node.redis.set(threadKeys(THREAD).log, 'not a list');
    await expect(storage.read(THREAD)).rejects.toThrow(/WRONGTYPE/);
  });

  it('writes under a lease it takes for the while, and gives it back at once', async () => {
    const { storage, threads, node } = await rig();
    expect(threads.holds(THREAD)).toBe(false);
    await storage.write(THREAD, recordOf([said('one')]), { from: 0, rewrite: false, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['one']);
    // The borrowed lease went back at once.
    expect(await node.redis.exists(threadKeys(THREAD).lease)).toBe(0);
    expect(await storage.holdsLease(THREAD)).toBe(false);
  });

  it('refuses a write while another instance holds the thread, and leaves its record as it was', async () => {
    const { node } = await rig();
    // A short lease, so that the write gives up waiting for it soon.
    const here = await ClusterNode.connect(url(), 'here', 200, silentLogger);
    const hereThreads = new ClusterThreads(here, silentLogger);
    const other = await ClusterNode.connect(url(), 'other', 60_000, silentLogger);
    cleanups.push(() => here.close(), () => hereThreads.close(), () => other.close());
    const storage = new RedisThreadStorage(here, hereThreads, silentLogger);
    await storage.write(THREAD, recordOf([said('one')]), { from: 0, rewrite: false, consumed: [] });

    expect(await other.acquire(leaseNameOf(THREAD))).toBeDefined();
    await expect(storage.write(THREAD, recordOf([said('one'), said('two')]), { from: 1, rewrite: false, consumed: [] })).rejects.toThrow(/held by another instance/);
    expect(texts(await storage.read(THREAD))).toEqual(['one']);
    expect(await node.redis.get(threadKeys(THREAD).lease)).toMatch(/^other#/);
  });

  it('writes a thread while another instance holds a different thread', async () => {
    const { storage } = await rig();
    const other = await ClusterNode.connect(url(), 'other', 60_000, silentLogger);
    cleanups.push(() => other.close());
    const held = await other.acquire(leaseNameOf('test:c2'));
    expect(held).toBeDefined();
    await storage.write(THREAD, recordOf([said('one')]), { from: 0, rewrite: false, consumed: [] });
    expect(texts(await storage.read(THREAD))).toEqual(['one']);
    // The other instance still holds its thread.
    expect(await other.renew(held!)).toBe(true);
  });
});
