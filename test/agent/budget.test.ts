/**
 * The daily cost limit books each model call's estimated cost before the call:
 * turns of one person running at the same time get no more calls than the
 * same messages sent one by one, and a booking a call never settled lapses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bookingTtlMs, LocalCostBudget } from '../../src/engine/budget.js';
import { UsageLedger } from '../../src/engine/usage.js';
import { Store } from '../../src/store/store.js';
import { HeldModel, startAppRig, type AppRig } from '../support/app-rig.js';
import { LIMIT_MESSAGE, SIXTY_CENT_CALLS, sixtyCentEcho } from '../support/priced-model.js';
import { testDm, testGroup } from '../support/test-channel.js';

let rig: AppRig | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  await cleanup?.();
  cleanup = undefined;
});

const ann = { id: 'ann', name: 'Ann' };
/** Ann's four conversations: her DM and three groups, each its own thread. */
const chats = [testDm(ann.id), testGroup('g1'), testGroup('g2'), testGroup('g3')];

describe('the daily cost limit, booked before each call', () => {
  it('lets two $0.60 calls through one by one under a $1.00 limit', async () => {
    rig = await startAppRig({ config: SIXTY_CENT_CALLS, responder: sixtyCentEcho });
    for (const [index, chat] of chats.entries()) {
      rig.platform.channel.userMessage({ chat, sender: ann, text: `message ${index}`, mentionsBot: true });
      await rig.app.runtime.idle();
    }
    expect(rig.llm.served).toBe(2);
    expect(chats.map((chat) => rig!.platform.lastMessage(chat)!.text.startsWith('echo:'))).toEqual([true, true, false, false]);
  });

  it('lets at most two of four concurrent turns of one person call the model', async () => {
    const model = new HeldModel(sixtyCentEcho);
    rig = await startAppRig({ config: SIXTY_CENT_CALLS, responder: model.respond });
    for (const [index, chat] of chats.entries()) rig.platform.channel.userMessage({ chat, sender: ann, text: `message ${index}`, mentionsBot: true });
    const refused = () => chats.filter((chat) => LIMIT_MESSAGE.test(rig!.platform.lastMessage(chat)?.text ?? ''));
    // Every turn has either reached the model (held there) or been refused.
    await rig.platform.waitFor(() => model.waiting + refused().length === chats.length, 10_000, 'every turn at the model or refused');
    await model.answerUntilIdle(rig.app);
    // Each estimate is exactly its call's cost: no fewer pass than one by one either.
    expect(model.arrived).toHaveLength(2);
    expect(refused()).toHaveLength(2);
    // The calls that passed were settled with their real cost: the next message is refused.
    rig.platform.channel.userMessage({ chat: chats[0]!, sender: ann, text: 'one more' });
    await model.answerUntilIdle(rig.app);
    expect(model.arrived).toHaveLength(2);
    expect(rig.platform.lastMessage(chats[0]!)!.text).toMatch(LIMIT_MESSAGE);
  });

  it('leaves another person alone while one has the limit booked', async () => {
    const model = new HeldModel(sixtyCentEcho);
    rig = await startAppRig({ config: SIXTY_CENT_CALLS, responder: model.respond });
    for (const chat of chats.slice(1, 3)) rig.platform.channel.userMessage({ chat, sender: ann, text: 'hold', mentionsBot: true });
    await rig.platform.waitFor(() => model.waiting === 2, 10_000, 'two held calls');
    const bob = { id: 'bob', name: 'Bob' };
    rig.platform.channel.userMessage({ chat: testDm(bob.id), sender: bob, text: 'hi' });
    await rig.platform.waitFor(() => model.waiting === 3, 10_000, "Bob's call at the model");
    await model.answerUntilIdle(rig.app);
    expect(rig.platform.lastMessage(testDm(bob.id))!.text).toBe('echo: hi');
  });
});

describe('LocalCostBudget', () => {
  async function ledger(): Promise<UsageLedger> {
    const dir = mkdtempSync(join(tmpdir(), 'pincer-budget-'));
    const store = await Store.open({ dataDir: dir });
    cleanup = async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    };
    return new UsageLedger(store);
  }

  it('refuses while spent plus booked reaches the limit, and forgets a booking past its expiry', async () => {
    let now = Date.parse('2025-03-01T12:00:00Z');
    const ttl = bookingTtlMs({ timeoutMs: 120_000, maxRetries: 4, retryMaxDelayMs: 30_000 });
    const budget = new LocalCostBudget(await ledger(), 1, ttl, () => now);
    const first = await budget.book('test:ann', 0.6);
    expect(first).toBeDefined();
    expect(await budget.book('test:ann', 0.6)).toBeDefined();
    expect(await budget.book('test:ann', 0.6)).toBeUndefined();
    await budget.release(first!);
    expect(await budget.book('test:ann', 0.6)).toBeDefined();
    // Two bookings no call will settle (their process died): they hold until they lapse, then no longer.
    now += ttl - 1;
    expect(await budget.book('test:ann', 0.6)).toBeUndefined();
    now += 1;
    expect(await budget.book('test:ann', 0.6)).toBeDefined();
  });
});

describe('bookingTtlMs', () => {
  it('outlasts every attempt and wait of the longest call by two minutes', () => {
    expect(bookingTtlMs({ timeoutMs: 120_000, maxRetries: 4, retryMaxDelayMs: 30_000 })).toBe(5 * 120_000 + 4 * 30_000 + 120_000);
  });
});
