/**
 * The routine limits through the whole app (SPEC section 13): a person's
 * routines are bounded by `routines.maxPerUser`; a prompt routine whose last
 * job still runs starts no other; a firing's claim expires after the catch-up
 * window and a margin; `list_schedules` reads its caller's routines only; and
 * catching up after downtime does not hold back the messages that arrive.
 */
import Keyv from 'keyv';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { RoutineStore, type Routine } from '../../src/routines/routine.js';
import { Store } from '../../src/store/store.js';
import { hang, textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { reminderRecord } from './records.js';

let rig: AppRig | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);
/** The default catch-up window (1h) and the margin claims are kept beyond it (1h). */
const CLAIM_TTL_MS = 2 * 3_600_000;

/** Job requests hang; "remind <text> in <s>s" is a schedule call, "listroutines" a list_schedules call; tool results are repeated. */
function model(request: FakeLlmRequest): FakeLlmEntry {
  if (/background job/.test(String(request.messages[0]?.content ?? ''))) return hang();
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply(`result: ${String(last.content).replace(/\s+/g, ' ')}`);
  const text = String(last.content).replace(/^\[[^\]]*\]\s*/, '');
  if (text === 'listroutines') return toolCallReply([{ name: 'list_schedules', arguments: {} }]);
  const asked = /remind (.+) in ([\d.]+)s/.exec(text);
  if (!asked) return textReply(`echo: ${text}`);
  return toolCallReply([{ name: 'schedule', arguments: { message: asked[1], at: new Date(Date.now() + Number(asked[2]) * 1000).toISOString() } }]);
}

function texts(chat = dm): string[] {
  return rig!.platform.messagesIn(chat).map((m) => m.text);
}

function say(text: string): void {
  rig!.platform.channel.userMessage({ chat: dm, sender: ada, text });
}

/** A reminder in its owner's DM (named after them), firing every day from `nextAt`. */
function reminder(id: string, text: string, nextAt: number, owner = 'test:owner'): Routine {
  const user = owner.slice(owner.indexOf(':') + 1);
  return { ...reminderRecord(id, text, nextAt, owner, user), createdAt: Date.now() };
}

/** Polls the store until `probe` gives a value. */
async function until<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('routine limits', () => {
  it('refuses a routine past routines.maxPerUser, naming the limit, without asking', async () => {
    rig = await startAppRig({ responder: model, config: { routines: { maxPerUser: 2 } } });
    for (const [i, text] of ['remind one in 600s', 'remind two in 600s'].entries()) {
      say(text);
      const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[i], 5_000, `approval prompt #${i + 1}`);
      rig.platform.channel.press(prompt.prompt.id, 'approve', ada);
      await rig.platform.waitFor(() => texts().filter((t) => /result: .*"id":"r\w+"/.test(t)).length === i + 1, 5_000, `routine #${i + 1}`);
    }
    say('remind three in 600s');
    const refusal = await rig.platform.waitFor(() => texts().find((t) => /maxPerUser/.test(t)), 5_000, 'the refusal');
    expect(refusal).toMatch(/you already have 2 routines \(routines\.maxPerUser is 2\)/);
    expect(rig.platform.approvalsIn(dm)).toHaveLength(2);
    expect((await rig.app.services.routines.list({ owner: 'test:owner' })).map((routine) => routine.name)).toEqual(['one', 'two']);
  });

  it('a prompt routine whose last job still runs starts no other: the firing is recorded as skipped, nobody is told', async () => {
    rig = await startAppRig({ responder: model });
    const first = Date.now() + 300;
    await rig.app.routines.scheduler.add({ ...reminder('rslow0001', 'slow', first), schedule: { kind: 'every', everyMs: 700, from: first }, action: { kind: 'prompt', prompt: 'take your time' } });
    const routine = await until(async () => {
      const stored = await rig!.app.services.routines.get('rslow0001');
      return stored && stored.skipped.length > 0 && stored;
    }, 'a skipped firing');
    const jobs = await rig.app.services.jobs.list();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.state).toBe('in_progress');
    expect(routine.skipped[0]!.reason).toMatch(new RegExp(`the job of its previous firing \\(${jobs[0]!.id}\\) has not ended`));
    expect(routine.lastResult).toMatch(/^skipped: /);
    expect(texts().filter((t) => /skipped|has not ended/.test(t))).toEqual([]);
  });

  it('a firing\'s claim expires after the catch-up window and a margin', async () => {
    rig = await startAppRig({ responder: model });
    const at = Date.now() + 200;
    await rig.app.routines.scheduler.add({ ...reminder('rclaim001', 'claimed', at), schedule: { kind: 'at', at } });
    await rig.platform.waitFor(() => texts().includes('⏰ claimed'), 5_000, 'the reminder');
    const expires = await rig.app.routines.claims.expiresAt('rclaim001', `rclaim001_${at}`);
    expect(expires).toBeGreaterThan(at + CLAIM_TTL_MS - 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + CLAIM_TTL_MS);
  });

  it.skipIf(!process.env.PINCER_TEST_REDIS_URL)(
    `a firing's claim in Redis expires after the catch-up window and a margin${process.env.PINCER_TEST_REDIS_URL ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)'}`,
    async () => {
      const url = new URL(process.env.PINCER_TEST_REDIS_URL!);
      // Database 2 of the test Redis: this suite's own (the cluster acceptance test empties 12 before each of its tests).
      url.pathname = '/2';
      const redis = new Redis(url.toString());
      await redis.flushdb();
      rig = await startAppRig({ responder: model, config: { storeUrl: url.toString() } });
      const at = Date.now() + 300;
      await rig.app.routines.scheduler.add({ ...reminder('rclaim002', 'claimed', at), schedule: { kind: 'at', at } });
      await rig.platform.waitFor(() => texts().includes('⏰ claimed'), 5_000, 'the reminder');
      const left = await redis.pttl(`pincer:routine-firing:rclaim002_${at}`);
      redis.disconnect();
      expect(left).toBeGreaterThan(CLAIM_TTL_MS - 60_000);
      expect(left).toBeLessThanOrEqual(CLAIM_TTL_MS);
    },
  );

  it('list_schedules reads its caller\'s routines, not the records of everyone else\'s', async () => {
    rig = await startAppRig({ responder: model });
    const { routines } = rig.app.services;
    const later = Date.now() + 86_400_000;
    for (let i = 0; i < 60; i++) await routines.create(reminder(`rtheirs${String(i).padStart(2, '0')}`, `theirs ${i}`, later, `test:other${i % 6}`));
    for (const id of ['rmine0001', 'rmine0002']) await routines.create(reminder(id, `mine ${id.slice(-1)}`, later));
    const reads = vi.spyOn(Keyv.prototype, 'get');
    say('listroutines');
    const reply = await rig.platform.waitFor(() => texts().find((t) => t.startsWith('result: ')), 5_000, 'the list');
    expect(reply).toMatch(/rmine0001.*rmine0002/);
    expect(reply).not.toMatch(/theirs/);
    const routineKeys = new Set(reads.mock.calls.map(([key]) => String(key)).filter((key) => key.startsWith('routines:')));
    expect([...routineKeys].sort()).toEqual(['routines:rmine0001', 'routines:rmine0002']);
  });

  it('catching up after downtime does not hold back a message that arrives at the start', async () => {
    rig = await startAppRig({ responder: model });
    await rig.stopApp();
    const store = await Store.open({ dataDir: rig.dir, log: silentLogger });
    const routines = new RoutineStore(store, silentLogger);
    const missed = Date.now() - 5 * 60_000;
    const count = 60;
    for (let i = 0; i < count; i++) await routines.create(reminder(`rmissed${String(i).padStart(2, '0')}`, `missed ${i}`, missed, 'test:carol'));
    await store.close();
    const carol = testDm('carol');
    // Each post takes 50 ms: catching up all of them takes 3 s.
    rig.platform.latencyMs = 50;
    await rig.startApp();
    say('hello');
    await rig.platform.waitFor(() => texts().includes('echo: hello'), 10_000, 'the answer');
    const postedBefore = texts(carol).length;
    expect(postedBefore).toBeLessThan(count / 2);
    await rig.platform.waitFor(() => texts(carol).length === count, 15_000, 'every caught-up reminder');
  });
});
