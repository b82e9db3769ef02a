/**
 * A routine's firing runs once when two attempts contest it (SPEC section 13,
 * "Exactly once"): one process whose timer delivers the same firing twice at
 * the same time (a retried timer racing the first delivery), two instances on
 * one Redis store that both fire it at once, and a process that died between
 * claiming a firing and recording it, restarted. The timers that deliver the
 * firings are fired by the test, so that both attempts reach the scheduler's
 * firing path before either has recorded the firing: only the claim stands
 * between them and a second post.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { silentLogger } from '../../src/log.js';
import { StoreClaims } from '../../src/deployment/claims.js';
import { claimTtlMs, FIRING_CLAIMS, firingId } from '../../src/routines/claims.js';
import { RoutineStore, type Routine } from '../../src/routines/routine.js';
import { RoutineScheduler } from '../../src/routines/scheduler.js';
import { Store } from '../../src/store/store.js';
import type { FireTimer, Timers } from '../../src/store/timers.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';
import { startFakeLlm, textReply, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { TestPlatform, testDm } from '../support/test-channel.js';
import { reminderRecord } from './records.js';
import { startInstance } from '../cluster/instances.js';

/** Database 15 of the test Redis: this suite's own, emptied before each test that uses it. */
const redis = testRedisDb(15);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const dm = testDm('owner');

/** A job's model reports its goal reached at once; the chat model says ok. */
function model(request: FakeLlmRequest) {
  return textReply(/background job/.test(String(request.messages[0]?.content ?? '')) ? 'DONE: looked' : 'ok');
}

/**
 * Timers the test fires by hand: a firing is delivered when the test says,
 * as often as it says, as a timer library that retries a delivery would.
 */
class HandTimers implements Timers {
  readonly name = 'in-process';
  private fire: FireTimer | undefined;

  async start(fire: FireTimer): Promise<void> {
    this.fire = fire;
  }

  async arm(): Promise<void> {}
  async disarm(): Promise<void> {}
  async stop(): Promise<void> {}

  /** Delivers the firing of `id` at `at`, as a due timer does. */
  deliver(id: string, at: number): Promise<void> {
    if (!this.fire) throw new Error('the timers are not started');
    return this.fire(id, at);
  }
}

/** A routine scheduler of `app` (its services, store and claims) whose timers the test fires. */
async function handFired(app: App): Promise<HandTimers> {
  const timers = new HandTimers();
  const { services } = app;
  await new RoutineScheduler(services, services.routines, app.routines.claims, timers, { scheduler: () => app.jobs.scheduler, store: app.jobs.store }).start();
  return timers;
}

/** A reminder in Ada's DM, firing every day from `nextAt`. */
function reminder(id: string, text: string, nextAt: number): Routine {
  return reminderRecord(id, text, nextAt);
}

/** The same routine as a prompt run as a job. */
function promptRoutine(id: string, nextAt: number): Routine {
  return { ...reminder(id, 'look around', nextAt), action: { kind: 'prompt', prompt: 'look around' }, tools: ['time'] };
}

function reminders(platform: TestPlatform, text: string): string[] {
  return platform.messagesIn(dm).map((m) => m.text).filter((t) => t === `⏰ ${text}`);
}

/** The one app of a single process, on SQLite or on the test Redis. */
async function oneProcess(store: 'sqlite' | 'redis'): Promise<AppRig> {
  if (store === 'redis') await flushDb(redis.url());
  const rig = await startAppRig({ responder: model, ...(store === 'redis' ? { config: { storeUrl: redis.url() } } : {}) });
  cleanups.push(() => rig.close());
  return rig;
}

const stores: Array<[store: 'sqlite' | 'redis', skip: string]> = [
  ['sqlite', ''],
  ['redis', redis.skip],
];

describe.each(stores)('one process racing its own retry (%s)%s', (store) => {
  const skip = store === 'redis' && !redis.available;

  it.skipIf(skip)('a reminder delivered twice at once is posted once', async () => {
    const rig = await oneProcess(store);
    const timers = await handFired(rig.app);
    const at = Date.now() + 3_600_000;
    await rig.app.services.routines.create(reminder('rtwice001', 'twice', at));
    await Promise.all([timers.deliver('rtwice001', at), timers.deliver('rtwice001', at)]);
    // Both deliveries have returned: whatever they were going to post is posted.
    expect(reminders(rig.platform, 'twice')).toHaveLength(1);
    expect(await rig.app.services.routines.get('rtwice001')).toMatchObject({ lastAt: at, lastResult: 'reminder sent', nextAt: at + 86_400_000 });
  });

  it.skipIf(skip)('a prompt routine delivered twice at once starts one job', async () => {
    const rig = await oneProcess(store);
    const timers = await handFired(rig.app);
    const at = Date.now() + 3_600_000;
    await rig.app.services.routines.create(promptRoutine('rtwice002', at));
    await Promise.all([timers.deliver('rtwice002', at), timers.deliver('rtwice002', at)]);
    const jobs = await rig.app.services.jobs.list();
    expect(jobs.map((job) => job.goal)).toEqual(['look around']);
    expect((await rig.app.services.routines.get('rtwice002'))!.lastJobId).toBe(jobs[0]!.id);
  });
});

describe.skipIf(!redis.available)(`two instances on one Redis store firing the same routine at once${redis.skip}`, () => {
  async function twoInstances(): Promise<{ platform: TestPlatform; a: App; b: App }> {
    await flushDb(redis.url());
    const llm = await startFakeLlm({ responder: model });
    cleanups.push(() => llm.close());
    const platform = new TestPlatform();
    const [a, b] = [await startInstance('a', { storeUrl: redis.url(), platform, llm }), await startInstance('b', { storeUrl: redis.url(), platform, llm })];
    cleanups.push(() => a.stop(), () => b.stop());
    return { platform, a: a.app, b: b.app };
  }

  it('post a reminder once', async () => {
    const { platform, a, b } = await twoInstances();
    const [onA, onB] = [await handFired(a), await handFired(b)];
    const at = Date.now() + 3_600_000;
    await a.services.routines.create(reminder('rboth0001', 'both', at));
    await Promise.all([onA.deliver('rboth0001', at), onB.deliver('rboth0001', at)]);
    expect(reminders(platform, 'both')).toHaveLength(1);
    expect(await b.services.routines.get('rboth0001')).toMatchObject({ lastResult: 'reminder sent', nextAt: at + 86_400_000 });
  });

  it('start one job for a prompt routine', async () => {
    const { a, b } = await twoInstances();
    const [onA, onB] = [await handFired(a), await handFired(b)];
    const at = Date.now() + 3_600_000;
    await a.services.routines.create(promptRoutine('rboth0002', at));
    await Promise.all([onA.deliver('rboth0002', at), onB.deliver('rboth0002', at)]);
    expect((await a.services.jobs.list()).map((job) => job.goal)).toEqual(['look around']);
  });
});

describe('a process that died between claiming a firing and recording it', () => {
  it('does not run that firing again when it starts: the claim stands, and a later routine is still caught up', async () => {
    const rig = await oneProcess('sqlite');
    await rig.stopApp();
    const store = await Store.open({ dataDir: rig.dir, log: silentLogger });
    const routines = new RoutineStore(store, silentLogger);
    const missed = Date.now() - 10 * 60_000;
    await routines.create(reminder('rclaimed1', 'claimed', missed));
    // Caught up after the claimed one (routines are caught up oldest first): once it is posted, the claimed one has had its turn.
    await routines.create(reminder('rmarker01', 'marker', missed));
    const ttl = claimTtlMs(rig.app.services.config.routines);
    expect(await new StoreClaims(store, FIRING_CLAIMS, ttl).claim('rclaimed1', firingId('rclaimed1', missed))).toBe(true);
    await store.close();
    await rig.startApp();
    await rig.platform.waitFor(() => reminders(rig.platform, 'marker').length === 1, 10_000, 'the caught-up marker');
    expect(reminders(rig.platform, 'claimed')).toEqual([]);
    // Its later firings are not lost: the next one is armed.
    expect((await rig.app.services.routines.get('rclaimed1'))!.nextAt).toBe(missed + 86_400_000);
  });
});
