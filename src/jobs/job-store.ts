/**
 * Jobs in the store: one record per job, listed by owner, by conversation
 * scope and all together (see {@link IdIndex}), so that `/jobs`, the tools, the
 * per-person limit and start-up read the jobs they are about and no others.
 * Every state change goes through {@link JobStore.transition}, which refuses
 * (and logs) a change the transition table does not allow. A job's
 * conversation is its own thread log (see {@link JobConversations}), apart
 * from the record.
 */
import { randomBytes } from 'node:crypto';
import { ToolError } from '../errors.js';
import type { Logger } from '../log.js';
import { IdIndex, LegacyIdList, type IndexEntry } from '../store/id-index.js';
import type { Namespace, Store } from '../store/store.js';
import { KeyvThreadStorage } from '../engine/thread-log.js';
import type { ChatMessage } from '../llm/types.js';
import { JobConversations } from './conversation.js';
import { canTransition, FINAL_STATES, newJob, StoredJobSchema, type JobRecord, type JobRequest, type JobState, type StoredJob } from './job.js';

/** The list of every job. */
const ALL = 'all';
/** Finished jobs kept listed, all together and per scope; older ones leave the lists (their records expire). */
const KEPT_FINISHED = 500;
/** Finished jobs kept listed per owner. */
const KEPT_FINISHED_PER_OWNER = 100;
/** How long a finished job's record is kept. */
const FINISHED_TTL_MS = 30 * 24 * 3_600_000;
/** Job records kept in memory once written, so that a step changes its job's record without reading it first. */
const HELD_RECORDS = 1_000;

const ownerKey = (owner: string) => `owner:${owner}`;
const scopeKey = (scope: string) => `scope:${scope}`;

/** The outcome of a state change. */
export type TransitionResult = { ok: true; job: JobRecord } | { ok: false; reason: string };

/** Which jobs to list. */
export interface JobFilter {
  owner?: string;
  /** Jobs created in conversations of this scope. */
  scope?: string;
  states?: readonly JobState[];
}

/** Decides whether one more job may start, given how many of its owner's have not ended: a reason to refuse, or undefined. */
export type ActiveJobsCheck = (active: number) => string | undefined;

/** Reads and writes jobs. */
export class JobStore {
  private readonly records: Namespace<StoredJob>;
  private readonly conversations: JobConversations;
  /** Jobs read with their conversation in the record (an earlier version's), until it is in their log. */
  private readonly inRecord = new Set<string>();
  private readonly ids: IdIndex;
  /** The single list of job ids that earlier versions kept. */
  private readonly legacyIndex: LegacyIdList;

  constructor(
    store: Store,
    private readonly log: Logger,
  ) {
    this.records = store.namespace('jobs', StoredJobSchema, 1, { hold: HELD_RECORDS });
    this.conversations = new JobConversations(new KeyvThreadStorage(store, log));
    this.ids = new IdIndex(store, 'job-ids');
    this.legacyIndex = new LegacyIdList(store, 'jobs-index');
  }

  /**
   * Persists a new pending job, listed before its record is written; resolves
   * once both are. With `check`, the count of its owner's jobs that have not
   * ended is checked and the job listed in one atomic step; a refusal is thrown
   * as a ToolError with the check's reason.
   */
  async create(request: JobRequest, check?: ActiveJobsCheck): Promise<JobRecord> {
    await this.ready();
    const job = newJob(newJobId(), request);
    const owner = ownerKey(job.owner);
    if (check) await this.settle(owner, KEPT_FINISHED_PER_OWNER);
    const refusal = await this.ids.add(owner, job.id, check && ((entries) => check(openCount(entries))), job.createdAt);
    if (refusal) throw new ToolError(refusal);
    await this.ids.add(scopeKey(job.origin.scope), job.id, undefined, job.createdAt);
    await this.ids.add(ALL, job.id, undefined, job.createdAt);
    await this.records.set(job.id, job);
    return job;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    return recordOf(await this.records.get(id));
  }

  /** The job's conversation with the model; for a job stored by an earlier version, the one in its record. */
  async conversation(id: string): Promise<ChatMessage[]> {
    const logged = await this.conversations.read(id);
    if (logged) return logged;
    const inRecord = (await this.records.get(id))?.messages;
    if (inRecord) this.inRecord.add(id);
    return inRecord ?? [];
  }

  /**
   * Writes the messages `messages` adds to the conversation last read or
   * written (see {@link conversation}); a conversation still in the record of
   * an earlier version leaves it once it is in the log. With `change`, the
   * job's record is changed as {@link update} does, in the same store
   * operation as the messages: the record never says more than the
   * conversation holds.
   */
  async saveConversation(job: JobRecord, messages: readonly ChatMessage[], change?: (job: JobRecord) => void): Promise<void> {
    const leavesRecord = this.inRecord.has(job.id);
    if (!change && !leavesRecord) return this.conversations.write(job, messages);
    await this.conversations.write(job, messages, (writes) =>
      this.records.update(
        job.id,
        (stored) => {
          if (!stored) return undefined;
          delete stored.messages;
          if (change) changed(stored, change);
          return stored;
        },
        writes,
      ).then(() => undefined),
    );
    this.inRecord.delete(job.id);
  }

  /** Changes a job's record (not its state: see {@link transition}); undefined when there is no such job. */
  async update(id: string, change: (job: JobRecord) => void): Promise<JobRecord | undefined> {
    return recordOf(await this.records.update(id, (job) => job && changed(job, change)));
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
        if (FINAL_STATES.has(to)) {
          job.finishedAt = job.updatedAt;
          job.resultOwed = true;
        }
        change?.(job);
        return job;
      },
    );
    if (refusal || !updated) {
      this.log.warn({ job: id, to, reason: refusal }, 'job transition refused');
      return { ok: false, reason: refusal ?? `there is no job ${id}` };
    }
    if (FINAL_STATES.has(to)) {
      this.conversations.forget(id);
      await this.retire(updated);
    }
    return { ok: true, job: recordOf(updated)! };
  }

  /**
   * Jobs matching `filter`, newest first. One owner's or one scope's jobs are
   * read from their own list; only a listing of everything reads every job.
   */
  async list(filter: JobFilter = {}): Promise<JobRecord[]> {
    await this.ready();
    const key = filter.owner ? ownerKey(filter.owner) : filter.scope ? scopeKey(filter.scope) : ALL;
    const onlyOpen = filter.states?.every((state) => !FINAL_STATES.has(state)) ?? false;
    const listed = await this.ids.read(key, (id) => this.get(id), onlyOpen ? (entry) => entry.ended === undefined : undefined);
    return listed
      .map((item) => item.record)
      .reverse()
      .filter((job): job is JobRecord => {
        if (!job) return false;
        if (filter.owner && job.owner !== filter.owner) return false;
        if (filter.scope && job.origin.scope !== filter.scope) return false;
        return !filter.states || filter.states.includes(job.state);
      });
  }

  /** Jobs that have not ended, newest first: start-up resumes them (and the list of all jobs is put right on the way). */
  async unfinished(): Promise<JobRecord[]> {
    await this.ready();
    return this.settle(ALL, KEPT_FINISHED);
  }

  /** A finished job's record expires in time; its lists mark it ended and keep the newest finished ones. */
  private async retire(job: JobRecord): Promise<void> {
    await this.records.set(job.id, job, FINISHED_TTL_MS);
    const ended = new Map([[job.id, job.finishedAt ?? job.updatedAt]]);
    await this.ids.end(ownerKey(job.owner), ended, KEPT_FINISHED_PER_OWNER);
    await this.ids.end(scopeKey(job.origin.scope), ended, KEPT_FINISHED);
    await this.ids.end(ALL, ended, KEPT_FINISHED);
  }

  /**
   * The jobs listed open under `key` that have not ended, newest first; those
   * whose record has ended (a crash came between the two writes) are marked
   * ended on the way.
   */
  private async settle(key: string, keepEnded: number): Promise<JobRecord[]> {
    const open = await this.ids.read(key, (id) => this.get(id), (entry) => entry.ended === undefined);
    const ended = new Map(open.flatMap(({ record }) => (record && FINAL_STATES.has(record.state) ? [[record.id, record.finishedAt ?? record.updatedAt] as const] : [])));
    await this.ids.end(key, ended, keepEnded);
    return open.flatMap(({ record }) => (record && !FINAL_STATES.has(record.state) ? [record] : [])).reverse();
  }

  /** Adopts the single list of job ids that earlier versions kept, once. */
  private async ready(): Promise<void> {
    const adopted = await this.legacyIndex.adoptOnce(this.ids, (id) => this.records.get(id), (job, id) => ({
      keys: [ownerKey(job.owner), scopeKey(job.origin.scope), ALL],
      entry: { id, at: job.createdAt, ...(FINAL_STATES.has(job.state) ? { ended: job.finishedAt ?? job.updatedAt } : {}) },
    }));
    if (adopted) this.log.info({ jobs: adopted }, 'jobs listed by owner and scope');
  }
}

/** The record without a conversation an earlier version kept in it: that one is read with {@link JobStore.conversation}. */
function recordOf(stored: StoredJob | undefined): JobRecord | undefined {
  if (!stored) return undefined;
  const { messages: _messages, ...record } = stored;
  return record;
}

/** The record changed by `change`, its time of change set. */
function changed<T extends JobRecord>(job: T, change: (job: JobRecord) => void): T {
  change(job);
  job.updatedAt = Date.now();
  return job;
}

/** Listed jobs that have not ended. */
function openCount(entries: readonly IndexEntry[]): number {
  return entries.filter((entry) => entry.ended === undefined).length;
}

/** A short id people can type: `j` and 8 characters. */
function newJobId(): string {
  return `j${randomBytes(6).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '').padEnd(8, '0').slice(0, 8)}`;
}
