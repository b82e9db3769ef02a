/**
 * The job store's lists: jobs are listed by owner before their record is
 * written, so a crash in between leaves an id without a record, which listings
 * skip and, once it is old, drop; a finished job is marked ended in its lists;
 * the single list of earlier versions is adopted once; and a conversation an
 * earlier version kept in the record still reads, and moves to the job's log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newJob, type JobRecord, type JobRequest } from '../../src/jobs/job.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { silentLogger } from '../../src/log.js';
import { IdIndex, IndexEntrySchema, RECORD_GRACE_MS } from '../../src/store/id-index.js';
import { Store } from '../../src/store/store.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-job-store-'));
  const store = await Store.open({ dataDir: dir, log: silentLogger });
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

function request(owner: string, title: string, scope = 'global'): JobRequest {
  return { title, goal: title, owner, ownerName: owner, origin: { channel: 'test', chatId: owner, kind: 'dm', scope }, tools: [], plan: false, maxIterations: 5, timeoutMs: 60_000 };
}

describe('the job store', () => {
  it('skips an id listed without a record (a crash in between), and drops it once it is old', async () => {
    const store = await openStore();
    const jobs = new JobStore(store, silentLogger);
    const mine = await jobs.create(request('test:ada', 'mine'));
    const lists = new IdIndex(store, 'job-ids');
    await lists.add('owner:test:ada', 'jlost0001', undefined, Date.now() - RECORD_GRACE_MS - 1_000);
    await lists.add('owner:test:ada', 'jfresh001');
    expect((await jobs.list({ owner: 'test:ada' })).map((job) => job.id)).toEqual([mine.id]);
    // The old one is taken for the trace of a crash; the fresh one may still be on its way.
    expect((await lists.entries('owner:test:ada')).map((entry) => entry.id)).toEqual([mine.id, 'jfresh001']);
  });

  it('marks a finished job ended in its lists, so that only unfinished jobs count against the limit', async () => {
    const store = await openStore();
    const jobs = new JobStore(store, silentLogger);
    const first = await jobs.create(request('test:ada', 'first'));
    await jobs.create(request('test:ada', 'second'));
    const counts: number[] = [];
    const check = (active: number) => {
      counts.push(active);
      return active >= 2 ? `full at ${active}` : undefined;
    };
    await expect(jobs.create(request('test:ada', 'third'), check)).rejects.toThrow('full at 2');
    await jobs.transition(first.id, 'cancelled');
    await jobs.create(request('test:ada', 'third'), check);
    expect(counts).toEqual([2, 1]);
    expect((await jobs.unfinished()).map((job) => job.title).sort()).toEqual(['second', 'third']);
  });

  it('puts the list of all jobs right at start-up when a job ended without its lists knowing (a crash in between)', async () => {
    const store = await openStore();
    const jobs = new JobStore(store, silentLogger);
    const job = await jobs.create(request('test:ada', 'crashed'));
    // The record ended, the lists were not told.
    await store.namespace('jobs', z.unknown(), 1).set(job.id, { ...job, state: 'completed', finishedAt: 7 });
    expect(await jobs.unfinished()).toEqual([]);
    const all = await store.namespace('job-ids', z.array(IndexEntrySchema), 1).get('all');
    expect(all).toEqual([expect.objectContaining({ id: job.id, ended: 7 })]);
  });

  it('adopts the single list of earlier versions once, by owner and scope', async () => {
    const store = await openStore();
    const records = store.namespace('jobs', z.unknown(), 1);
    const old: JobRecord[] = [newJob('jold00001', request('test:ada', 'old ada')), { ...newJob('jold00002', request('test:bob', 'old bob', 'guild:1')), state: 'completed', finishedAt: 5 }];
    for (const job of old) await records.set(job.id, job);
    await store.namespace('jobs-index', z.array(z.string()), 1).set('all', [...old.map((job) => job.id), 'jgone0001']);
    const jobs = new JobStore(store, silentLogger);
    expect((await jobs.list({ owner: 'test:ada' })).map((job) => job.id)).toEqual(['jold00001']);
    expect((await jobs.list({ scope: 'guild:1' })).map((job) => job.id)).toEqual(['jold00002']);
    expect((await jobs.unfinished()).map((job) => job.id)).toEqual(['jold00001']);
    expect(await store.namespace('jobs-index', z.array(z.string()), 1).get('all')).toBeUndefined();
    const all = await store.namespace('job-ids', z.array(IndexEntrySchema), 1).get('all');
    expect(all?.map((entry) => [entry.id, entry.ended])).toEqual([['jold00001', undefined], ['jold00002', 5]]);
  });

  it('reads the conversation an earlier version kept in the record, and moves it to the job\'s log at the next write', async () => {
    const store = await openStore();
    const records = store.namespace('jobs', z.unknown(), 1);
    const conversation = [{ role: 'user', content: 'Goal: old' }, { role: 'assistant', content: 'working' }] as const;
    const old = { ...newJob('jold00003', request('test:ada', 'old')), state: 'in_progress', messages: conversation };
    await records.set(old.id, old);
    const jobs = new JobStore(store, silentLogger);
    const job = (await jobs.get(old.id))!;
    expect(job.state).toBe('in_progress');
    expect(job).not.toHaveProperty('messages');
    const messages = await jobs.conversation(old.id);
    expect(messages).toEqual(conversation);
    await jobs.saveConversation(job, [...messages, { role: 'assistant', content: 'DONE: old' }]);
    expect(await records.get(old.id)).not.toHaveProperty('messages');
    // Another process reads it from the log.
    expect(await new JobStore(store, silentLogger).conversation(old.id)).toEqual([...conversation, { role: 'assistant', content: 'DONE: old' }]);
  });
});
