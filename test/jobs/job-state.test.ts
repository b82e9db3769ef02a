/**
 * The job state machine (SPEC 12): every legal transition goes through the
 * store, and an illegal one is refused, logged and changes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { canTransition, JOB_STATES, JOB_TRANSITIONS, type JobRequest, type JobState } from '../../src/jobs/job.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';

const request: JobRequest = {
  title: 'Count',
  goal: 'count to three',
  owner: 'test:owner',
  ownerName: 'Ada',
  origin: { channel: 'test', chatId: 'dm-owner', kind: 'dm', scope: 'global' },
  tools: ['calculator'],
  plan: false,
  maxIterations: 5,
  timeoutMs: 60_000,
};

/** A path from `pending` to `state` through legal transitions. */
const PATHS: Record<JobState, JobState[]> = {
  pending: [],
  in_progress: ['in_progress'],
  waiting_approval: ['in_progress', 'waiting_approval'],
  stuck: ['in_progress', 'stuck'],
  completed: ['in_progress', 'completed'],
  failed: ['in_progress', 'failed'],
  cancelled: ['cancelled'],
};

let dir: string | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = undefined;
  dir = undefined;
});

async function openJobs(log = silentLogger): Promise<JobStore> {
  dir = mkdtempSync(join(tmpdir(), 'pincer-jobs-'));
  store = await Store.open({ url: undefined, dataDir: dir, log: silentLogger });
  return new JobStore(store, log);
}

describe('the job state machine', () => {
  it('allows exactly the transitions of the table', () => {
    expect(JOB_TRANSITIONS).toEqual({
      pending: ['in_progress', 'cancelled', 'failed'],
      in_progress: ['waiting_approval', 'completed', 'failed', 'stuck', 'cancelled'],
      waiting_approval: ['in_progress', 'cancelled', 'failed'],
      stuck: ['in_progress', 'failed', 'cancelled'],
      completed: [],
      failed: [],
      cancelled: [],
    });
    for (const from of JOB_STATES) for (const to of JOB_STATES) expect(canTransition(from, to)).toBe(JOB_TRANSITIONS[from].includes(to));
  });

  it('takes every legal transition in the store', async () => {
    const jobs = await openJobs();
    for (const from of JOB_STATES) {
      for (const to of JOB_TRANSITIONS[from]) {
        const job = await jobs.create(request);
        for (const step of PATHS[from]) expect((await jobs.transition(job.id, step)).ok).toBe(true);
        const moved = await jobs.transition(job.id, to);
        expect(moved.ok, `${from} -> ${to}`).toBe(true);
        expect((await jobs.get(job.id))!.state).toBe(to);
      }
    }
  });

  it('refuses an illegal transition, logs it and changes nothing', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()) });
    const jobs = await openJobs(createLogger({ level: 'debug', pretty: false, destination: sink }));
    const job = await jobs.create(request);
    await jobs.transition(job.id, 'in_progress');
    expect((await jobs.transition(job.id, 'completed', (record) => (record.result = 'done'))).ok).toBe(true);
    const refused = await jobs.transition(job.id, 'in_progress', (record) => (record.result = 'changed'));
    expect(refused).toEqual({ ok: false, reason: `job ${job.id} cannot go from completed to in_progress` });
    const stored = await jobs.get(job.id);
    expect(stored).toMatchObject({ state: 'completed', result: 'done' });
    expect(lines.join('')).toContain('job transition refused');
    expect((await jobs.transition('nope', 'failed')).ok).toBe(false);
  });

  it('lists jobs by owner, scope and state, newest first', async () => {
    const jobs = await openJobs();
    const first = await jobs.create(request);
    const second = await jobs.create({ ...request, owner: 'test:ben', origin: { ...request.origin, scope: 'test:group:g1', kind: 'group', chatId: 'g1' } });
    await jobs.transition(first.id, 'cancelled');
    expect((await jobs.list()).map((job) => job.id)).toEqual([second.id, first.id]);
    expect((await jobs.list({ owner: 'test:owner' })).map((job) => job.id)).toEqual([first.id]);
    expect((await jobs.list({ scope: 'test:group:g1' })).map((job) => job.id)).toEqual([second.id]);
    expect((await jobs.unfinished()).map((job) => job.id)).toEqual([second.id]);
  });
});
