/**
 * A job's step journal stays short however long the job runs (the record is
 * rewritten at every step), and never loses a step that started and did not
 * finish: that is what a restart looks for.
 */
import { describe, expect, it } from 'vitest';
import { finishStep, journalStep, MAX_JOURNALED_STEPS, newJob, unfinishedToolSteps, type JobRequest } from '../../src/jobs/job.js';

const request: JobRequest = {
  title: 'Long',
  goal: 'many steps',
  owner: 'test:owner',
  ownerName: 'Ada',
  origin: { channel: 'test', chatId: 'dm-owner', kind: 'dm', scope: 'global' },
  tools: ['calculator'],
  plan: false,
  maxIterations: 500,
  timeoutMs: 60_000,
};

describe('the step journal', () => {
  it('keeps the newest finished steps only, and counts every step', () => {
    const job = newJob('j1', request);
    for (let i = 0; i < 500; i += 1) finishStep(job, journalStep(job, { kind: 'model', status: 'started' }), 'done');
    expect(job.stepCount).toBe(500);
    expect(job.steps).toHaveLength(MAX_JOURNALED_STEPS);
    expect(job.steps.at(-1)!.n).toBe(500);
    expect(job.steps.every((step) => step.status === 'done')).toBe(true);
  });

  it('keeps a tool call that started and never finished, however many steps come after it', () => {
    const job = newJob('j1', request);
    const crashed = journalStep(job, { kind: 'tool', tool: 'shell', callId: 'call-7', status: 'started' });
    for (let i = 0; i < 3 * MAX_JOURNALED_STEPS; i += 1) finishStep(job, journalStep(job, { kind: 'model', status: 'started' }), 'done');
    expect(unfinishedToolSteps(job).map((step) => step.n)).toEqual([crashed]);
    expect(job.steps.length).toBeLessThanOrEqual(MAX_JOURNALED_STEPS + 1);
  });

  it('marks the step it names, not another', () => {
    const job = newJob('j1', request);
    const first = journalStep(job, { kind: 'tool', tool: 'a', callId: 'c1', status: 'started' });
    const second = journalStep(job, { kind: 'tool', tool: 'b', callId: 'c2', status: 'started' });
    finishStep(job, first, 'failed');
    expect(job.steps.map((step) => [step.n, step.status])).toEqual([
      [first, 'failed'],
      [second, 'started'],
    ]);
  });
});
