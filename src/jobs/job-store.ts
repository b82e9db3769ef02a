/**
 * Jobs in the store: one record per job, and an index of job ids so that
 * `/jobs`, the tools and start-up can find them without scanning the store.
 * Every state change goes through {@link JobStore.transition}, which refuses
 * (and logs) a change the transition table does not allow.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from '../log.js';
import type { Namespace, Store } from '../store/store.js';
import { canTransition, FINAL_STATES, JobRecordSchema, newJob, type JobRecord, type JobRequest, type JobState } from './job.js';

const INDEX_KEY = 'all';
/** Finished jobs kept findable; older finished ones leave the index (their records expire). */
const KEPT_FINISHED = 500;
/** How long a finished job's record is kept. */
const FINISHED_TTL_MS = 30 * 24 * 3_600_000;

/** The outcome of a state change. */
export type TransitionResult = { ok: true; job: JobRecord } | { ok: false; reason: string };

/** Which jobs to list. */
export interface JobFilter {
  owner?: string;
  /** Jobs created in conversations of this scope. */
  scope?: string;
  states?: readonly JobState[];
}

/** Reads and writes jobs. */
export class JobStore {
  private readonly records: Namespace<JobRecord>;
  private readonly index: Namespace<string[]>;

  constructor(
    store: Store,
    private readonly log: Logger,
  ) {
    this.records = store.namespace('jobs', JobRecordSchema, 1);
    this.index = store.namespace('jobs-index', z.array(z.string()), 1);
  }

  /** Persists a new pending job and indexes it; resolves once both are written. */
  async create(request: JobRequest): Promise<JobRecord> {
    const job = newJob(newJobId(), request);
    await this.records.set(job.id, job);
    await this.index.update(INDEX_KEY, (ids) => [...(ids ?? []), job.id]);
    return job;
  }

  get(id: string): Promise<JobRecord | undefined> {
    return this.records.get(id);
  }

  /** Changes a job's record (not its state: see {@link transition}); undefined when there is no such job. */
  async update(id: string, change: (job: JobRecord) => void): Promise<JobRecord | undefined> {
    return this.records.update(id, (job) => {
      if (!job) return undefined;
      change(job);
      job.updatedAt = Date.now();
      return job;
    });
  }

  /**
   * Moves a job to `to` (and applies `change` in the same write) when the
   * table allows it; otherwise nothing changes and the refusal is logged.
   */
  async transition(id: string, to: JobState, change?: (job: JobRecord) => void): Promise<TransitionResult> {
    let refusal: string | undefined;
    const updated = await this.records.update(
      id,
      (job) => {
        if (!job) {
          refusal = `there is no job ${id}`;
          return undefined;
        }
        if (!canTransition(job.state, to)) {
          refusal = `job ${id} cannot go from ${job.state} to ${to}`;
          return job;
        }
        job.state = to;
        job.updatedAt = Date.now();
        if (FINAL_STATES.has(to)) job.finishedAt = job.updatedAt;
        change?.(job);
        return job;
      },
    );
    if (refusal || !updated) {
      this.log.warn({ job: id, to, reason: refusal }, 'job transition refused');
      return { ok: false, reason: refusal ?? `there is no job ${id}` };
    }
    if (FINAL_STATES.has(to)) await this.retire(updated);
    return { ok: true, job: updated };
  }

  /** Jobs matching `filter`, newest first. */
  async list(filter: JobFilter = {}): Promise<JobRecord[]> {
    const ids = (await this.index.get(INDEX_KEY)) ?? [];
    const jobs = await Promise.all([...ids].reverse().map((id) => this.records.get(id)));
    return jobs.filter((job): job is JobRecord => {
      if (!job) return false;
      if (filter.owner && job.owner !== filter.owner) return false;
      if (filter.scope && job.origin.scope !== filter.scope) return false;
      return !filter.states || filter.states.includes(job.state);
    });
  }

  /** Jobs that have not ended: start-up resumes them. */
  unfinished(): Promise<JobRecord[]> {
    return this.list({ states: ['pending', 'in_progress', 'waiting_approval', 'stuck'] });
  }

  /** A finished job's record expires in time; the index keeps the newest finished ones. */
  private async retire(job: JobRecord): Promise<void> {
    await this.records.set(job.id, job, FINISHED_TTL_MS);
    const ids = (await this.index.get(INDEX_KEY)) ?? [];
    if (ids.length <= KEPT_FINISHED * 2) return;
    const jobs = await Promise.all(ids.map((id) => this.records.get(id)));
    const finished = jobs.filter((entry): entry is JobRecord => Boolean(entry && FINAL_STATES.has(entry.state))).map((entry) => entry.id);
    const drop = new Set(finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED)));
    const gone = new Set(ids.filter((_, i) => !jobs[i]));
    await this.index.update(INDEX_KEY, (current) => (current ?? []).filter((id) => !drop.has(id) && !gone.has(id)));
  }
}

/** A short id people can type: `j` and 8 characters. */
function newJobId(): string {
  return `j${randomBytes(6).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '').padEnd(8, '0').slice(0, 8)}`;
}
