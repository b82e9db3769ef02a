/**
 * The job limits through the whole app (SPEC section 12): one person's
 * unfinished jobs are bounded by `jobs.maxActivePerUser`, also when several
 * create_job calls of one batch race; steps and time above
 * `jobs.maxIterationsLimit` / `jobs.maxTimeoutMinutes` are refused, naming the
 * limit, before anyone is asked; and `list_jobs` reads its caller's jobs only.
 */
import Keyv from 'keyv';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { hang, textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig, type AppRigOptions } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import type { JobRecord, JobRequest } from '../../src/jobs/job.js';
import { holdRedisDb } from '../e2e/cluster-harness.js';

// Database 11 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(11);
}, 900_000);
afterAll(() => releaseDb?.());

let rig: AppRig | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await rig?.close();
  rig = undefined;
});

/** The stores the suite runs on: SQLite, and Redis (BullMQ engine) when one is there to use. */
const STORES = [
  { name: 'SQLite' },
  process.env.PINCER_TEST_REDIS_URL ? { name: 'Redis', storeUrl: redisDb(process.env.PINCER_TEST_REDIS_URL, 11) } : { name: 'Redis', skip: 'PINCER_TEST_REDIS_URL is not set' },
] as const satisfies readonly { name: string; storeUrl?: string; skip?: string }[];

function redisDb(base: string, db: number): string {
  const url = new URL(base);
  url.pathname = `/${db}`;
  return url.toString();
}

async function startRig(storeUrl: string | undefined, options: AppRigOptions): Promise<AppRig> {
  if (storeUrl) {
    const redis = new Redis(storeUrl);
    await redis.flushdb();
    redis.disconnect();
  }
  return startAppRig({ ...options, config: { ...options.config, ...(storeUrl ? { storeUrl } : {}) } });
}

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

/** Whether a model request is a job's (its system prompt says it runs a background job). */
function isJobRequest(request: FakeLlmRequest): boolean {
  return /background job/.test(String(request.messages[0]?.content ?? ''));
}

/**
 * The chat side: "job <goal> [iterations N] [timeout M]" is one create_job
 * call, "jobs <goal> xN" N calls in one batch, "listjobs" a list_jobs call;
 * after the tools the model repeats their results. Jobs hang until cancelled.
 */
function model(request: FakeLlmRequest): FakeLlmEntry {
  if (isJobRequest(request)) return hang();
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') {
    const results = request.messages.slice(request.messages.findLastIndex((m) => m.role === 'assistant')).filter((m) => m.role === 'tool');
    return textReply(`chat: ${results.map((m) => String(m.content).replace(/\s+/g, ' ')).join(' | ')}`);
  }
  const text = String(last.content).replace(/^\[[^\]]*\]\s*/, '');
  if (text === 'listjobs') return toolCallReply([{ name: 'list_jobs', arguments: {} }]);
  const many = /^jobs (\S+) x(\d+)$/.exec(text);
  if (many) return toolCallReply(Array.from({ length: Number(many[2]) }, (_, i) => ({ name: 'create_job', arguments: { title: `${many[1]} ${i}`, goal: `${many[1]} ${i}` } })));
  const one = /^job (\S+)(?: iterations (\d+))?(?: timeout (\d+))?$/.exec(text);
  if (!one) return textReply(`echo: ${text}`);
  return toolCallReply([{ name: 'create_job', arguments: { title: one[1], goal: one[1], ...(one[2] ? { maxIterations: Number(one[2]) } : {}), ...(one[3] ? { timeoutMinutes: Number(one[3]) } : {}) } }]);
}

function texts(): string[] {
  return rig!.platform.messagesIn(dm).map((m) => m.text);
}

function say(text: string): void {
  rig!.platform.channel.userMessage({ chat: dm, sender: ada, text });
}

async function approveNext(index: number): Promise<void> {
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[index], 5_000, `approval prompt #${index + 1}`);
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
}

/** Waits for the chat's answer after a tool call that mentions `pattern`. */
function answer(pattern: RegExp): Promise<string> {
  return rig!.platform.waitFor(() => texts().find((t) => t.startsWith('chat: ') && pattern.test(t)), 10_000, `an answer matching ${pattern}`);
}

async function jobsIn(state: JobRecord['state'], count: number): Promise<JobRecord[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const jobs = await rig!.app.services.jobs.list({ states: [state] });
    if (jobs.length >= count || Date.now() > deadline) return jobs;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A pending job of `owner`, written to the store as create_job would. */
function request(owner: string, title: string): JobRequest {
  return {
    title,
    goal: title,
    owner,
    ownerName: owner,
    origin: { channel: 'test', chatId: owner.slice(owner.indexOf(':') + 1), kind: 'dm', scope: 'global' },
    tools: [],
    plan: false,
    maxIterations: 5,
    timeoutMs: 60_000,
  };
}

for (const store of STORES) {
  const skip = 'skip' in store ? store.skip : undefined;
  const storeUrl = 'storeUrl' in store ? store.storeUrl : undefined;
  describe.skipIf(Boolean(skip))(`job limits on ${store.name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('refuses a job past jobs.maxActivePerUser, naming the limit, without asking; an ended job frees its place', async () => {
      rig = await startRig(storeUrl, { responder: model, config: { jobs: { maxActivePerUser: 1 } } });
      say('job first');
      await approveNext(0);
      const [first] = await jobsIn('in_progress', 1);
      say('job second');
      expect(await answer(/maxActivePerUser/)).toMatch(/you already have 1 active job \(jobs\.maxActivePerUser is 1\)/);
      expect(rig.platform.approvalsIn(dm)).toHaveLength(1);
      expect(await rig.app.services.jobs.list()).toHaveLength(1);

      rig.platform.channel.command({ chat: dm, sender: ada, name: 'jobs', args: `cancel ${first!.id}` });
      await jobsIn('cancelled', 1);
      say('job third');
      await approveNext(1);
      expect((await jobsIn('in_progress', 1)).map((job) => job.title)).toEqual(['third']);
    });

    it('counts atomically: three create_job calls of one batch, two places, two jobs', async () => {
      rig = await startRig(storeUrl, { responder: model, config: { jobs: { maxActivePerUser: 2 } } });
      // Allowed without asking, so that the three calls run together.
      await rig.app.services.permissions.set('test:owner', 'create_job', 'alwaysAllow');
      say('jobs race x3');
      const reply = await answer(/"state":"pending"/);
      expect(reply.match(/"state":"pending"/g)).toHaveLength(2);
      expect(reply).toMatch(/you already have 2 active jobs \(jobs\.maxActivePerUser is 2\)/);
      expect(await rig.app.services.jobs.list({ owner: 'test:owner' })).toHaveLength(2);
    });

    it('refuses maxIterations above jobs.maxIterationsLimit and timeoutMinutes above jobs.maxTimeoutMinutes, naming them, without asking', async () => {
      rig = await startRig(storeUrl, { responder: model, config: { jobs: { maxIterationsLimit: 50, maxTimeoutMinutes: 60 } } });
      say('job big iterations 80');
      expect(await answer(/maxIterations/)).toMatch(/maxIterations 80 is above the limit \(jobs\.maxIterationsLimit is 50\)/);
      say('job long timeout 90');
      expect(await answer(/maxTimeoutMinutes/)).toMatch(/timeoutMinutes 90 is above the limit \(jobs\.maxTimeoutMinutes is 60\)/);
      expect(rig.platform.approvalsIn(dm)).toHaveLength(0);
      expect(await rig.app.services.jobs.list()).toHaveLength(0);
      // Within the bounds it is asked as usual.
      say('job fits iterations 50 timeout 60');
      await approveNext(0);
      expect((await jobsIn('in_progress', 1))[0]).toMatchObject({ maxIterations: 50, timeoutMs: 3_600_000 });
    });

    it('list_jobs reads its caller\'s jobs, not the records of everyone else\'s', async () => {
      rig = await startRig(storeUrl, { responder: model });
      const { jobs } = rig.app.services;
      for (let i = 0; i < 60; i++) await jobs.create(request(`test:other${i % 6}`, `theirs ${i}`));
      const mine = [await jobs.create(request('test:owner', 'mine 1')), await jobs.create(request('test:owner', 'mine 2'))];
      const reads = vi.spyOn(Keyv.prototype, 'get');
      say('listjobs');
      const reply = await answer(/mine/);
      expect(reply).toMatch(/mine 1/);
      expect(reply).toMatch(/mine 2/);
      expect(reply).not.toMatch(/theirs/);
      const jobKeys = new Set(reads.mock.calls.map(([key]) => String(key)).filter((key) => key.startsWith('jobs:')));
      expect([...jobKeys].sort()).toEqual(mine.map((job) => `jobs:${job.id}`).sort());
    });
  });
}
