/**
 * An answer part that Telegram accepted from a process that died before
 * putting it on record: the successor resuming the answer looks for it (the
 * real channel against the fake, one channel state shared as the store would
 * be) and does not post it again, without touching any other message.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Election } from '../../../src/channels/election.js';
import { memoryLedger } from '../../../src/engine/deliveries.js';
import { SentTrail } from '../../../src/channels/telegram/sent-trail.js';
import type { ChannelState, ChatAddress } from '../../../src/channels/types.js';
import { silentLogger } from '../../../src/log.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, dmOf, memoryState, startChannel, type Harness } from './helpers.js';

const DM: ChatAddress = { channel: 'telegram', chatId: String(ALICE.id) };
const KEY = 'answer:telegram:1001:1700000000000';
/** Two paragraphs of about 3,000 characters: two parts on Telegram. */
const ANSWER = ['first', 'second'].map((word) => `${word}: ${'x'.repeat(2_990)}`).join('\n\n');

/**
 * A view of `base` whose process dies at its `dieAt`-th update: that update
 * and every later one never complete. `after` runs once the `hookAt`-th
 * update is done, before the caller goes on.
 */
function dyingState(base: ChannelState, dieAt: number, hookAt = 0, after: () => Promise<void> = async () => {}): ChannelState {
  let updates = 0;
  return {
    get: (key) => base.get(key),
    set: (key, value, ttlMs) => base.set(key, value, ttlMs),
    update: async (key, change) => {
      updates += 1;
      if (updates >= dieAt) return new Promise(() => {});
      const result = await base.update!(key, change);
      if (updates === hookAt) await after();
      return result;
    },
  };
}

/** An election this instance never wins. */
const STANDBY: Election = {
  campaign: (_duty, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a part a stopped process was sending', () => {
  let fake: FakeTelegram;
  let base: ReturnType<typeof memoryState>;
  const started: Harness[] = [];

  beforeEach(async () => {
    fake = await startFakeTelegram();
    base = memoryState();
  });

  afterEach(async () => {
    for (const harness of started.splice(0)) await harness.channel.stop();
    await fake.close();
  });

  const start = async (state: ChannelState, options: { throttle?: boolean } = {}) => {
    // These tests receive nothing: no instance wins the polling duty (so none gets Telegram's 409).
    const harness = await startChannel(fake, { deps: { state, election: STANDBY }, options });
    started.push(harness);
    return harness.channel;
  };
  const shown = () => fake.chatMessages(ALICE.id).map((message) => message.plainText.slice(0, 24));
  const posts = () => fake.calls.filter((call) => call.method === 'sendMessage').length;
  const edits = () => fake.calls.filter((call) => call.method === 'editMessageText').length;
  const question = () => String(fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'tell me' }).message.message_id);

  /** The first process sends the answer until it dies; the parts it put on record are returned. */
  const dieWhileSending = async (state: ChannelState, replyTo: string, shownBeforeDeath: number) => {
    const dying = await start(state);
    const ledger = memoryLedger();
    void dying.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger });
    await waitFor(() => fake.chatMessages(ALICE.id).length >= shownBeforeDeath, 5_000, `${shownBeforeDeath} messages of the dying process`);
    await sleep(50);
    return ledger;
  };

  it('finds a part Telegram accepted but the process did not record, past ten messages of a person and another post of the bot', async () => {
    const replyTo = question();
    const other = await start(base);
    // Updates: the first part begun (1) and recorded (2); the second begun (3). While it is being
    // sent, another instance posts a notice and Alice writes ten times; the process dies recording it (4).
    const ledger = await dieWhileSending(
      dyingState(base, 4, 3, async () => {
        await other.send(DM, 'A notice from another instance');
        for (let i = 0; i < 10; i += 1) fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: `are you there? (${i})` });
      }),
      replyTo,
      3,
    );
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx', 'A notice from another in', 'second: xxxxxxxxxxxxxxxx']);
    const before = { posts: posts(), ids: fake.chatMessages(ALICE.id).map((message) => String(message.messageId)) };

    const successor = await start(base);
    const sent = await successor.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger, resumed: true });

    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx', 'A notice from another in', 'second: xxxxxxxxxxxxxxxx']);
    expect(posts()).toBe(before.posts);
    expect(sent.ids).toEqual([before.ids[0], before.ids[2]]);
    // The notice and Alice's message were not changed: no edit went through.
    expect(fake.chatMessages(ALICE.id).every((message) => message.edits === 0)).toBe(true);
    expect(fake.calls.filter((call) => call.method === 'editMessageText').map((call) => call.payload.message_id)).not.toContain(Number(before.ids[1]));
  });

  it("does not post a part again when the process died after recording it and before the answer's own ledger did", async () => {
    const replyTo = question();
    const dying = await start(base);
    // The answer's ledger (the delivery log in the store) takes the first part; the process dies writing the second.
    const ledger = memoryLedger();
    const dyingLedger = { sent: ledger.sent, record: (index: number, id: string) => (index === 0 ? ledger.record(index, id) : new Promise<void>(() => {})) };
    void dying.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: dyingLedger });
    await waitFor(() => fake.chatMessages(ALICE.id).length >= 2, 5_000, 'both parts of the dying process');
    await waitFor(() => base.entries.get(`sent:${DM.chatId}`) !== undefined && Object.keys((base.entries.get(`sent:${DM.chatId}`) as { pending: object }).pending).length === 0, 5_000, 'the second part on record');
    expect(ledger.sent.size).toBe(1);
    const before = { posts: posts(), edits: edits(), ids: fake.chatMessages(ALICE.id).map((message) => String(message.messageId)) };

    const successor = await start(base);
    const sent = await successor.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger, resumed: true });
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx', 'second: xxxxxxxxxxxxxxxx']);
    expect(sent.ids).toEqual(before.ids);
    // Known by its name: neither posted nor probed.
    expect({ posts: posts(), edits: edits() }).toEqual({ posts: before.posts, edits: before.edits });
  });

  it('finds the first answer of a DM, which quotes nothing, by the message it answers', async () => {
    const question = String(fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'hi' }).message.message_id);
    // Update 1 puts the answer on record as pending; the process dies recording Telegram's id (update 2).
    const dying = await start(dyingState(base, 2));
    void dying.send(DM, 'Hello Alice.', { idempotencyKey: KEY, after: question, parts: memoryLedger() });
    await waitFor(() => fake.chatMessages(ALICE.id).length >= 1, 5_000, 'the answer of the dying process');
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'hello?' });

    const successor = await start(base);
    const sent = await successor.send(DM, 'Hello Alice.', { idempotencyKey: KEY, after: question, parts: memoryLedger(), resumed: true });
    expect(shown()).toEqual(['Hello Alice.']);
    expect(posts()).toBe(1);
    expect(sent.ids).toEqual([String(fake.chatMessages(ALICE.id)[0]!.messageId)]);
  });

  it('sends a part the process died before Telegram got', async () => {
    const replyTo = question();
    // Updates: the first part begun (1) and recorded (2); the second begun (3), and the process dies before sending it.
    const ledger = await dieWhileSending(dyingState(base, 4, 3, () => new Promise(() => {})), replyTo, 1);
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx']);

    const successor = await start(base);
    await successor.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger, resumed: true });
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx', 'second: xxxxxxxxxxxxxxxx']);
    expect(posts()).toBe(2);
    // Three probes: the three ids after the first part hold no message, so the second never went out.
    expect(edits()).toBe(3);
  });

  it("sends at once, and once, a part whose process was killed while it waited for the chat's pacing, however much the person wrote meanwhile", async () => {
    const replyTo = question();
    // With Telegram's pacing on, as in production: the second part waits a second for the chat's slot.
    const dying = await start(base, { throttle: true });
    const ledger = memoryLedger();
    const sending = dying.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger }).catch(() => undefined);
    await waitFor(() => fake.chatMessages(ALICE.id).length >= 1, 5_000, 'the first part of the dying process');
    for (let i = 0; i < 12; i += 1) fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: `are you there? (${i})` });
    // Killed while the second part waits its turn: its request never leaves.
    await dying.stop();
    await sending;
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx']);
    expect(ledger.sent.size).toBe(1);

    const successor = await start(base, { throttle: true });
    const startedAt = performance.now();
    await successor.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger, resumed: true });
    const tookMs = performance.now() - startedAt;

    const bot = fake.chatMessages(ALICE.id).filter((message) => !message.plainText.startsWith('are you there'));
    expect(bot.map((message) => message.plainText.slice(0, 24))).toEqual(['first: xxxxxxxxxxxxxxxxx', 'second: xxxxxxxxxxxxxxxx']);
    expect(posts()).toBe(2);
    // Nothing was pending, so nothing was probed: before, the search probed the twelve messages at one a second.
    expect(edits()).toBe(0);
    expect(tookMs).toBeLessThan(3_000);
  });

  it('probes nothing while another post of the chat is pending: the part is sent again rather than risk editing that post', async () => {
    const replyTo = question();
    const ledger = await dieWhileSending(dyingState(base, 4), replyTo, 2);
    // Another post of the chat was being sent when the process died, with no message id on record.
    await new SentTrail(base, silentLogger).begin(DM.chatId, 'a-notice', Number(replyTo));
    const editsBefore = edits();

    const successor = await start(base);
    await successor.send(DM, ANSWER, { idempotencyKey: KEY, replyTo, parts: ledger, resumed: true });
    expect(edits()).toBe(editsBefore);
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx', 'second: xxxxxxxxxxxxxxxx', 'second: xxxxxxxxxxxxxxxx']);
  });

  it('does not look for parts of an answer sent the first time', async () => {
    const replyTo = question();
    const channel = await start(base);
    await channel.send(DM, ANSWER, { idempotencyKey: KEY, replyTo });
    expect(shown()).toEqual(['first: xxxxxxxxxxxxxxxxx', 'second: xxxxxxxxxxxxxxxx']);
    expect(edits()).toBe(0);
    // Both parts are on record by their ids and names, none pending.
    const ids = fake.chatMessages(ALICE.id).map((message) => message.messageId);
    expect(base.entries.get(`sent:${DM.chatId}`)).toEqual({ sent: ids, pending: {}, named: { [`${KEY}#0`]: ids[0], [`${KEY}#1`]: ids[1] } });
  });

  it('does not post a message again when Telegram took it and the answer was lost on the network', async () => {
    const replyTo = question();
    const channel = await start(base);
    fake.failNext('sendMessage', { drop: true, processed: true });
    const sent = await channel.send(DM, 'Here is the answer.', { replyTo });
    expect(shown()).toEqual(['Here is the answer.']);
    expect(posts()).toBe(1);
    expect(sent.ids).toEqual([String(fake.chatMessages(ALICE.id)[0]!.messageId)]);
  });

  it('posts a message again when the connection dropped before Telegram took it', async () => {
    const replyTo = question();
    const channel = await start(base);
    fake.failNext('sendMessage', { drop: true });
    await channel.send(DM, 'Here is the answer.', { replyTo });
    expect(shown()).toEqual(['Here is the answer.']);
    expect(posts()).toBe(2);
  });

  it('lets a post left pending over an hour ago (its process died then) no longer stop a search', async () => {
    let now = 1_000_000_000;
    const trail = new SentTrail(base, silentLogger, () => now);
    await trail.done(DM.chatId, 'earlier', 40);
    await trail.begin(DM.chatId, 'a-notice', 41);
    now += 30 * 60_000;
    await trail.begin(DM.chatId, 'the-part', 41);
    expect(await trail.lookup(DM.chatId, 'the-part')).toBeUndefined();
    now += 31 * 60_000;
    expect(await trail.lookup(DM.chatId, 'the-part')).toEqual({ kind: 'search', after: 41, known: new Set([40]) });
    // Not pending at all: nothing to look for.
    expect(await trail.lookup(DM.chatId, 'never-begun')).toBeUndefined();
  });

  it("keeps the names of the latest parts only, and their ids as the bot's known messages", async () => {
    const trail = new SentTrail(base, silentLogger);
    for (let i = 1; i <= 10; i += 1) await trail.done(DM.chatId, `answer:${i}#0`, 100 + i, true);
    expect(await trail.lookup(DM.chatId, 'answer:10#0')).toEqual({ kind: 'sent', id: 110 });
    expect(await trail.lookup(DM.chatId, 'answer:3#0')).toEqual({ kind: 'sent', id: 103 });
    expect(await trail.lookup(DM.chatId, 'answer:2#0')).toBeUndefined();
    expect((base.entries.get(`sent:${DM.chatId}`) as { sent: number[] }).sent).toHaveLength(10);
  });
});
