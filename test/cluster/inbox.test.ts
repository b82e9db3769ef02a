/**
 * A shared thread's inbox holds its messages in the order the person wrote
 * them, whichever order the instances stored them in: Slack spreads one chat's
 * messages over the instances' sockets (and sends one again to another socket
 * when it is not acknowledged in time), so a later message can reach Redis
 * first. And an instance taking a thread over hands each waiting message to
 * the thread once, even when another arrives during the takeover.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatInfo, InboundMessage } from '../../src/channels/types.js';
import { threadKeyOf } from '../../src/channels/types.js';
import { CLUSTER_PREFIX, ClusterNode } from '../../src/cluster/node.js';
import { inboxInOrder, threadKeys, type InboxEntry } from '../../src/cluster/thread-storage.js';
import { ClusterThreads, type ThreadHost } from '../../src/cluster/threads.js';
import { platformOrder, toQueued } from '../../src/engine/inbox.js';
import { silentLogger } from '../../src/log.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';

/** Database 10 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url } = testRedisDb(10);

let node: ClusterNode | undefined;
let threads: ClusterThreads | undefined;
afterEach(async () => {
  await threads?.close();
  node?.close();
  node = threads = undefined;
});

function message(chat: ChatInfo, messageId: string, text: string): InboundMessage {
  return { type: 'message', chat, sender: { id: 'U1', name: 'One' }, receivedAt: Date.now(), messageId, text, mentionsBot: true, replyToBot: false, attachments: [] };
}

const dm = (channel: string, chatId: string): ChatInfo => ({ channel, chatId, kind: 'dm', scope: 'global' });

/** Stores the messages in the order given, and returns the inbox's texts in the order the thread reads them. */
async function inboxAfter(chat: ChatInfo, arrivals: [messageId: string, text: string][]): Promise<string[]> {
  await flushDb(url());
  node = await ClusterNode.connect(url(), 'a', 2_000, silentLogger);
  threads = new ClusterThreads(node, silentLogger);
  for (const [messageId, text] of arrivals) expect((await threads.intake(message(chat, messageId, text))).kind).toBe('added');
  return inboxInOrder(await node.redis.lrange(threadKeys(threadKeyOf(chat)).inbox, 0, -1)).map((entry) => entry.message.text);
}

describe('platformOrder', () => {
  it("sorts as the platform's ids do, as strings of one width", () => {
    const sorted = (ids: string[]) => [...ids].sort((a, b) => (platformOrder(a)! < platformOrder(b)! ? -1 : 1));
    // Telegram message ids: 9 before 10, which plain strings would not give.
    expect(sorted(['10', '9', '100'])).toEqual(['9', '10', '100']);
    // Slack ts: the microseconds count, and a shorter fraction means fewer of them.
    expect(sorted(['1700000001.000001', '1700000000.9', '1700000000.000100'])).toEqual(['1700000000.000100', '1700000000.9', '1700000001.000001']);
    // Discord snowflakes past 2^53, one apart.
    expect(sorted(['1180000000000000003', '1180000000000000002'])).toEqual(['1180000000000000002', '1180000000000000003']);
  });

  it('gives nothing for an id that is not a number', () => {
    expect(platformOrder('u-12')).toBeUndefined();
    expect(platformOrder('')).toBeUndefined();
  });
});

describe.skipIf(!available)(`the shared inbox's order${skip}`, () => {
  it('puts a Slack message stored late before the later ones already waiting', async () => {
    const texts = await inboxAfter(dm('slack', 'D1'), [
      ['1700000000.000100', 'm1'],
      ['1700000004.000100', 'm5'],
      ['1700000002.000100', 'm3'],
      ['1700000003.000100', 'm4'],
      ['1700000001.000100', 'm2'],
    ]);
    expect(texts).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
  });

  it('orders Telegram ids as numbers and Discord snowflakes past 2^53 exactly', async () => {
    expect(await inboxAfter(dm('telegram', '42'), [['10', 'ten'], ['9', 'nine'], ['11', 'eleven']])).toEqual(['nine', 'ten', 'eleven']);
    expect(await inboxAfter(dm('discord', '77'), [['1180000000000000003', 'third'], ['1180000000000000002', 'second']])).toEqual(['second', 'third']);
  });

  it('keeps arrival order for ids that are not numbers, and does not move a message behind one of them', async () => {
    const texts = await inboxAfter(dm('test', 'c1'), [['5', 'five'], ['x-1', 'named'], ['3', 'three']]);
    expect(texts).toEqual(['five', 'named', 'three']);
  });
});

describe.skipIf(!available)(`taking a thread over while its messages arrive${skip}`, () => {
  it('hands each inbox entry to the runner once: a message arriving during the takeover is not read with the ones it queued', async () => {
    await flushDb(url());
    node = await ClusterNode.connect(url(), 'a', 2_000, silentLogger);
    const coordinator = (threads = new ClusterThreads(node, silentLogger));
    const chat = dm('telegram', '42');
    const thread = threadKeyOf(chat);
    const inbox = threadKeys(thread).inbox;
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let takeOvers = 0;
    const handed: string[] = [];
    const host: ThreadHost = {
      // Like the runtime: reads the thread (its inbox) and queues what waits, which takes a while.
      takeOver: async () => {
        takeOvers += 1;
        const waiting = (await node!.redis.lrange(inbox, 0, -1)).map((text) => JSON.parse(text) as InboxEntry);
        handed.push(...waiting.map((entry) => entry.message.text));
        await gate;
        return waiting.map((entry) => entry.message.id);
      },
      deliver: (_thread, entries) => handed.push(...entries.map((entry) => entry.message.text)),
      spare: () => true,
      busy: () => handed.length > 0,
      forget: () => undefined,
      flush: () => Promise.resolve(),
      lost: () => undefined,
    };
    coordinator.start(host);
    await coordinator.intake(message(chat, '1', 'm1'));
    await until(() => takeOvers === 1, 'the takeover to start');
    // m2 arrives while the takeover still reads the thread: every instance is told of it. The
    // coordinator's listener came first, so once this one hears the news the coordinator has too.
    let pokes = 0;
    node.onMessage((news) => void (news.type === 'poke' && pokes++));
    await coordinator.intake(message(chat, '2', 'm2'));
    await until(() => pokes === 1, 'the news of m2 to arrive');
    openGate();
    await until(() => handed.includes('m2'), 'm2 to be handed over');
    // The thread's entries are handed over in order: m2 again would come before m3.
    await coordinator.intake(message(chat, '3', 'm3'));
    await until(() => handed.includes('m3'), 'm3 to be handed over');
    expect(handed).toEqual(['m1', 'm2', 'm3']);
  });
});

describe.skipIf(!available)(`an open thread found by the sweep${skip}`, () => {
  it('is left for a free slot when every slot is taken, and taken once one frees', async () => {
    await flushDb(url());
    node = await ClusterNode.connect(url(), 'a', 2_000, silentLogger);
    const coordinator = (threads = new ClusterThreads(node, silentLogger));
    const chat = dm('telegram', '43');
    const thread = threadKeyOf(chat);
    // Stored by another instance whose news this one did not hear (it died, or the news is still on the way).
    const entry: InboxEntry = { chat, message: toQueued(message(chat, '1', 'waiting')) };
    await node.redis.rpush(threadKeys(thread).inbox, JSON.stringify(entry));
    await node.redis.sadd(`${CLUSTER_PREFIX}open`, thread);
    let spare = false;
    let asked = 0;
    let takeOvers = 0;
    const host: ThreadHost = {
      takeOver: () => {
        takeOvers += 1;
        return Promise.resolve([entry.message.id]);
      },
      deliver: () => undefined,
      spare: () => {
        asked += 1;
        return spare;
      },
      busy: () => takeOvers > 0,
      forget: () => undefined,
      flush: () => Promise.resolve(),
      lost: () => undefined,
    };
    coordinator.start(host);
    // The first sweep runs at start: it asks for a free slot before taking the thread, and finds none.
    await until(() => asked > 0 || takeOvers > 0, 'the first sweep');
    expect(takeOvers).toBe(0);
    expect(coordinator.holds(thread)).toBe(false);
    spare = true;
    await until(() => takeOvers === 1, 'the thread taken once a slot is free');
    expect(coordinator.holds(thread)).toBe(true);
  });
});

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
