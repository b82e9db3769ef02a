/**
 * An answer in several parts is sent through the outbox to the Telegram fake by
 * the real channel: a retry goes on from the part that failed, and an answer
 * sent again after a crash skips the parts its first sending put on record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeliveryLog } from '../../src/engine/deliveries.js';
import { Outbox } from '../../src/engine/outbox.js';
import type { ChatAddress } from '../../src/channels/types.js';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ALICE, startChannel, type Harness } from '../channels/telegram/helpers.js';

const DM: ChatAddress = { channel: 'telegram', chatId: String(ALICE.id) };
const KEY = 'answer:telegram:1001:1700000000000';
/** Three paragraphs of about 3,000 characters: three parts on Telegram. */
const ANSWER = ['first', 'second', 'third'].map((word) => `${word}: ${'x'.repeat(2_990)}`).join('\n\n');
/** Telegram refusing a send in a way the channel does not retry itself. */
const REFUSED = { error_code: 400, description: 'Bad Request: chat not found' };

describe('sending an answer in parts', () => {
  let fake: FakeTelegram;
  let harness: Harness;
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    fake = await startFakeTelegram();
    harness = await startChannel(fake);
    dir = mkdtempSync(join(tmpdir(), 'pincer-deliveries-'));
    store = await Store.open({ url: `sqlite://${join(dir, 'pincer.sqlite')}` });
  });

  afterEach(async () => {
    await store.close();
    await harness.channel.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const outbox = () => new Outbox(new Map([['telegram', harness.channel]]), (text) => text, silentLogger, undefined, new DeliveryLog(store, silentLogger));
  const shown = () => fake.chatMessages(ALICE.id).map((message) => message.plainText.split(':')[0]);

  it('retries from the part Telegram refused: each part is shown once, in order', async () => {
    fake.failNext('sendMessage', REFUSED, 1, 1);
    const sent = await outbox().send(DM, ANSWER);
    expect(shown()).toEqual(['first', 'second', 'third']);
    expect(sent?.ids).toEqual(fake.chatMessages(ALICE.id).map((message) => String(message.messageId)));
    // Four calls: the first part once, the refused second part and its retry, the third part.
    expect(fake.calls.filter((call) => call.method === 'sendMessage')).toHaveLength(4);
  });

  it('sends again only the parts a crashed sending had not put on record', async () => {
    // The first sending: the first part goes out and is put on record, then the process dies.
    const first = await new DeliveryLog(store, silentLogger).ledger(KEY, false);
    fake.failNext('sendMessage', REFUSED, 1, 1);
    await expect(harness.channel.send(DM, ANSWER, { idempotencyKey: KEY, parts: first })).rejects.toThrow(/chat not found/);
    expect(shown()).toEqual(['first']);

    // Its successor, with a log of its own over the same store, resumes the answer.
    const successor = outbox();
    const sent = await successor.send(DM, ANSWER, { idempotencyKey: KEY, resumed: true });
    expect(shown()).toEqual(['first', 'second', 'third']);
    expect(sent?.ids).toEqual(fake.chatMessages(ALICE.id).map((message) => String(message.messageId)));

    // Once its turn is closed the record goes; sending the answer again would send it whole.
    await successor.forget(KEY);
    expect((await new DeliveryLog(store, silentLogger).ledger(KEY, true)).sent.size).toBe(0);
  });

  it('reads no record for an answer sent the first time, and keeps sending when the store fails', async () => {
    const log = new DeliveryLog(store, silentLogger);
    const ledger = await log.ledger(KEY, false);
    await ledger.record(0, '41');
    // Not resumed: whatever is on record is not consulted.
    expect((await log.ledger(KEY, false)).sent.size).toBe(0);
    expect([...(await log.ledger(KEY, true)).sent]).toEqual([[0, '41']]);

    await store.close();
    // A store that cannot be read or written costs the guarantee, never the answer.
    const sent = await outbox().send(DM, ANSWER, { idempotencyKey: KEY, resumed: true });
    expect(sent?.ids).toHaveLength(3);
    expect(shown()).toEqual(['first', 'second', 'third']);
    store = await Store.open({ url: `sqlite://${join(dir, 'pincer.sqlite')}` });
  });
});
