/**
 * Every model call a turn causes counts toward its person's usage and daily
 * ceiling, the summary requests of compaction included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig } from '../support/app-rig.js';
import { dayOf, formatUsage, UsageLedger } from '../../src/engine/usage.js';
import { Store } from '../../src/store/store.js';
import { testDm } from '../support/test-channel.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** A SQLite store in a fresh folder, closed and removed after the test. */
async function openStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-usage-'));
  const store = await Store.open({ dataDir: dir });
  cleanup = async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return store;
}

/** A model response of 10 input and 1 output tokens that cost `costUsd`. */
const callCosting = (costUsd: number) => ({ content: '', toolCalls: [], finishReason: 'stop' as const, usage: { inputTokens: 10, outputTokens: 1, cachedTokens: 0 }, costUsd, model: 'm' });

const isSummaryRequest = (request: FakeLlmRequest) => String(request.messages[0]?.content ?? '').startsWith('Summarise the conversation');

/** What a ledger started now reads as `userId`'s cost today, once it reaches `expected` or 4 s have passed. */
async function costSeenByANewLedger(store: Store, userId: string, expected: number): Promise<number> {
  const started = Date.now();
  let seen = 0;
  while (seen < expected && Date.now() - started < 4_000) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    seen = (await new UsageLedger(store).userToday(userId)).costUsd;
  }
  return seen;
}

describe('usage', () => {
  it('counts compaction summary requests in /usage and in the cost that the daily limit reads', async () => {
    const rig = await startAppRig({
      responder: (request) => (isSummaryRequest(request) ? textReply('They talked about filler.', { usage: { prompt_tokens: 1000, completion_tokens: 100 } }) : textReply('ok', { usage: { prompt_tokens: 100, completion_tokens: 10 } })),
      config: { llm: { prices: { 'fake-model': { input: 1, output: 2 } } }, agent: { maxContextTokens: 1000, keepRecentMessages: 2 } },
    });
    cleanup = () => rig.close();
    const { app, llm, platform } = rig;
    const user = { id: 'cy', name: 'Cy' };
    const chat = testDm(user.id);
    for (let i = 0; i < 4; i++) {
      platform.channel.userMessage({ chat, sender: user, text: `${i} ${'filler '.repeat(200)}` });
      await platform.waitFor(() => platform.messagesIn(chat).length === i + 1, 5_000, `answer ${i}`);
    }
    await app.runtime.idle();
    const summaries = llm.requests.filter(isSummaryRequest).length;
    expect(summaries).toBeGreaterThan(0);
    const calls = llm.requests.length;

    platform.channel.command({ chat, sender: user, name: 'usage' });
    const reply = await platform.waitFor(() => platform.messagesIn(chat).find((m) => m.text.startsWith('Your usage today')), 5_000, 'the /usage reply');
    expect(reply.text).toContain(`over ${calls} model calls`);
    const answers = calls - summaries;
    const expectedCost = (answers * (100 * 1 + 10 * 2) + summaries * (1000 * 1 + 100 * 2)) / 1_000_000;
    expect((await app.services.usage.userToday('test:cy')).costUsd).toBeCloseTo(expectedCost, 10);
  });

  it('puts each call on record within a second: a ledger started after a crash, or another instance\'s, sees it without a flush', async () => {
    const store = await openStore();
    const response = callCosting(0.25);
    const first = new UsageLedger(store);
    const other = new UsageLedger(store);
    // The other instance has read the total before the calls: what it shows next must not be that old reading.
    expect((await other.userToday('test:ann')).costUsd).toBe(0);
    await first.record('test:ann', response);
    await first.record('test:ann', response);
    // No flush and no close, as after kill -9: the calls are written within a second.
    expect(await costSeenByANewLedger(store, 'test:ann', 0.5)).toBeCloseTo(0.5, 10);
    // What the daily cost ceiling reads on another instance counts them too, and its own calls add on top.
    expect((await other.userToday('test:ann')).costUsd).toBeCloseTo(0.5, 10);
    await other.record('test:ann', response);
    expect((await other.userToday('test:ann')).calls).toBe(3);
    expect((await first.userToday('test:ann')).calls).toBe(3);
    expect((await other.totalToday()).costUsd).toBeCloseTo(0.75, 10);
  });

  it('counts the images sent with the calls, added up across two instances', async () => {
    const store = await openStore();
    const first = new UsageLedger(store);
    const other = new UsageLedger(store);
    await first.record('test:ann', callCosting(0), { images: 2 });
    await other.record('test:ann', callCosting(0), { images: 1 });
    await other.record('test:ann', callCosting(0));
    await Promise.all([first.flush(), other.flush()]);
    const total = await new UsageLedger(store).userToday('test:ann');
    expect(total).toMatchObject({ calls: 3, images: 3 });
    expect(formatUsage(total)).toBe('30 in / 3 out tokens (with 3 images, about 3,000 of the tokens in), $0.0000 over 3 model calls');
  });

  it('keeps only a bounded number of written totals in memory, and reads an evicted one back exactly', async () => {
    const store = await openStore();
    const ledger = new UsageLedger(store);
    const response = callCosting(0.01);
    for (let user = 0; user < 6_000; user++) await ledger.record(`test:u${user}`, response);
    await ledger.record('test:u0', response);
    await ledger.flush();
    expect(Reflect.get(ledger, 'cache').size).toBeLessThanOrEqual(5_000);
    expect((await ledger.userToday('test:u0')).calls).toBe(2);
    expect((await ledger.userToday('test:u1')).calls).toBe(1);
    expect((await ledger.totalToday()).calls).toBe(6_001);
  });

  it('reads each person\'s usage of a day, counted by every instance sharing the store, and nobody for a day without calls', async () => {
    const store = await openStore();
    let now = Date.parse('2026-03-01T10:00:00Z');
    const first = new UsageLedger(store, () => now);
    const other = new UsageLedger(store, () => now);
    await first.record('test:ann', callCosting(0.25));
    await other.record('test:ann', callCosting(0.25));
    await other.record('test:bob', callCosting(0.5));
    now = Date.parse('2026-03-02T09:00:00Z');
    await first.record('test:bob', callCosting(1));
    await other.flush();
    const march1 = await first.usersOn('2026-03-01');
    expect(march1.sort((a, b) => a.userId.localeCompare(b.userId))).toEqual([
      expect.objectContaining({ userId: 'test:ann', calls: 2, inputTokens: 20, outputTokens: 2, costUsd: 0.5 }),
      expect.objectContaining({ userId: 'test:bob', calls: 1, costUsd: 0.5 }),
    ]);
    await first.flush();
    expect(await new UsageLedger(store).usersOn('2026-03-02')).toEqual([expect.objectContaining({ userId: 'test:bob', calls: 1, costUsd: 1 })]);
    expect(await first.usersOn('2026-02-28')).toEqual([]);
  });

  it('as the store\'s sole writer, puts calls on record within a second and reads an evicted total back exactly', async () => {
    const store = await openStore();
    const ledger = new UsageLedger(store, Date.now, { soleWriter: true });
    const response = callCosting(0.25);
    await ledger.record('test:ann', response);
    expect((await ledger.userToday('test:ann')).costUsd).toBeCloseTo(0.25, 10);
    await ledger.record('test:ann', response);
    // No flush, as after kill -9: both calls are written within a second, the second on top of the first.
    expect(await costSeenByANewLedger(store, 'test:ann', 0.5)).toBeCloseTo(0.5, 10);
    for (let user = 0; user < 5_100; user++) await ledger.record(`test:u${user}`, callCosting(0.01));
    await ledger.record('test:ann', response);
    await ledger.flush();
    expect((await ledger.userToday('test:ann')).calls).toBe(3);
    expect((await new UsageLedger(store).userToday('test:ann')).costUsd).toBeCloseTo(0.75, 10);
    expect((await ledger.totalToday()).calls).toBe(5_103);
  });

  it('names the UTC day of a time, also across midnight and going back to an earlier day', () => {
    const midnight = Date.UTC(2026, 10, 28);
    const times = [midnight - 1, midnight, midnight + 1, midnight + 86_399_999, midnight + 86_400_000, midnight - 1, midnight - 86_400_000, midnight + 5, -1, 0];
    expect(times.map(dayOf)).toEqual(times.map((time) => new Date(time).toISOString().slice(0, 10)));
    expect(dayOf(midnight - 1)).toBe('2026-11-27');
    expect(dayOf(midnight)).toBe('2026-11-28');
  });
});
