/**
 * A message to a job reaches it at its next step whichever instance the owner
 * wrote on: the instance running the job hears of it, though its steps do not
 * read the stored mailbox when nothing was announced.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JobRequest } from '../../src/jobs/job.js';
import type { Tool } from '../../src/tools/types.js';
import { flushDb, holdRedisDb, testRedisDb } from '../e2e/cluster-harness.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmRequest } from '../fakes/llm/server.js';
import { TestPlatform } from '../support/test-channel.js';
import { startInstance, type Instance } from './instances.js';

let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(6);
}, 900_000);
afterAll(() => releaseDb?.());

/** Database 6 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url } = testRedisDb(6);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MESSAGE = 'please stop after this step';
const STEP_MS = 150;

/** Steps of the job, by the instance that ran them; and the step at which the job first saw the message. */
const steps: string[] = [];

/** A tool that takes a moment, and records which instance ran it. */
function step(instance: string): Tool {
  return {
    name: 'step',
    description: 'One step of the work (test)',
    parameters: z.object({}),
    readOnly: true,
    requiresApproval: () => 'never',
    execute: async () => {
      steps.push(instance);
      await new Promise((resolve) => setTimeout(resolve, STEP_MS));
      return 'step done';
    },
  };
}

/** The job keeps stepping until the owner's message is in its conversation, then reports. */
function responder(request: FakeLlmRequest) {
  const told = request.messages.some((message) => message.role === 'user' && String(message.content).includes(MESSAGE));
  return told ? textReply(`DONE: stopped after ${steps.length} steps`) : toolCallReply([{ name: 'step', arguments: {} }]);
}

const job: JobRequest = {
  title: 'Long work',
  goal: 'step until told to stop',
  owner: 'test:owner',
  ownerName: 'Owner',
  origin: { channel: 'test', chatId: 'owner', kind: 'dm', scope: 'global' },
  tools: ['step'],
  plan: false,
  maxIterations: 60,
  timeoutMs: 60_000,
};

describe.skipIf(!available)(`a message to a job on another instance${skip}`, () => {
  it('is read at the running job’s next steps, not after a wait', async () => {
    steps.length = 0;
    await flushDb(url());
    const llm: FakeLlm = await startFakeLlm({ responder });
    cleanups.push(() => llm.close());
    const platform = new TestPlatform();
    const instances: Record<string, Instance> = {};
    for (const id of ['a', 'b']) {
      instances[id] = await startInstance(id, { storeUrl: url(), platform, llm, tools: [step(id)] });
      cleanups.push(() => instances[id]!.stop());
    }
    const created = await instances.a!.app.jobs.scheduler.create(job);
    await platform.waitFor(() => steps.length >= 2, 15_000, 'the job to take two steps');
    const runner = steps[0]!;
    const other = runner === 'a' ? 'b' : 'a';
    const posted = steps.length;
    const answer = await instances[other]!.app.jobs.scheduler.message(created.id, MESSAGE);
    expect(answer.ok).toBe(true);
    await platform.waitFor(() => platform.sent.some((sent) => sent.text.includes('stopped after')), 15_000, 'the job to report');
    // Without the notice, the running instance would read its mailbox only every 10 s: some 60 steps later.
    expect(steps.length - posted).toBeLessThanOrEqual(2);
    const record = await instances[runner]!.app.jobs.store.get(created.id);
    expect(record?.state, JSON.stringify(record?.result)).toBe('completed');
    expect(new Set(steps)).toEqual(new Set([runner]));
  }, 60_000);
});
