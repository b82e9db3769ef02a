/**
 * A job's conversation with the model, kept as a thread of its own kind
 * (`job:<id>`) in the same thread log as chat threads: a step appends its new
 * messages, it never rewrites the conversation. The job's record keeps only
 * its small fields.
 */
import { zeroUsage, type ThreadRecord } from '../engine/history.js';
import type { ThreadCommit } from '../engine/thread-log.js';
import type { ThreadDelta, ThreadStorage } from '../engine/thread-storage.js';
import type { ChatMessage } from '../llm/types.js';
import type { JobRecord } from './job.js';
import { jobThreadKey } from './job-runs.js';

/** Jobs whose written messages are remembered between writes (the most recently used ones). */
const REMEMBERED = 2_000;

/** A thread storage whose writes may carry records of the caller's (see {@link ThreadCommit}). */
export interface CommittingStorage extends ThreadStorage {
  write(key: string, record: ThreadRecord, delta: ThreadDelta, commit?: ThreadCommit): Promise<void>;
}

/** Reads and appends jobs' conversations. */
export class JobConversations {
  /** Per job, the messages last read or written, as the very objects: a message is replaced, never changed in place. */
  private readonly written = new Map<string, readonly ChatMessage[]>();

  constructor(private readonly storage: CommittingStorage) {}

  /** The job's conversation from its log; undefined when it has none yet (a new job, or one stored by an earlier version). */
  async read(id: string): Promise<ChatMessage[] | undefined> {
    const stored = await this.storage.read(jobThreadKey(id));
    if (stored) this.remember(id, stored.messages.slice());
    else this.written.delete(id);
    return stored?.messages;
  }

  /**
   * Writes the messages added since the last read or write of the job; all of
   * them when the earlier ones changed. `commit` writes them, with records of its own.
   */
  async write(job: JobRecord, messages: readonly ChatMessage[], commit?: ThreadCommit): Promise<void> {
    const before = this.written.get(job.id);
    // A copy: the job's array may grow while this one is written.
    const after = messages.slice();
    await this.storage.write(jobThreadKey(job.id), threadOf(job, after), deltaBetween(before, after), commit);
    this.remember(job.id, after);
  }

  /** Forgets what was written of a job that has ended. */
  forget(id: string): void {
    this.written.delete(id);
  }

  private remember(id: string, messages: readonly ChatMessage[]): void {
    this.written.delete(id);
    this.written.set(id, messages);
    if (this.written.size > REMEMBERED) this.written.delete(this.written.keys().next().value!);
  }
}

/** An append when `after` starts with the very messages of `before`; otherwise a rewrite. */
function deltaBetween(before: readonly ChatMessage[] | undefined, after: readonly ChatMessage[]): ThreadDelta {
  const kept = before !== undefined && before.length <= after.length && before.every((message, i) => message === after[i]);
  return kept ? { from: before.length, rewrite: false, consumed: [] } : { from: 0, rewrite: true, consumed: [] };
}

/** The job's conversation as a thread record: the job's origin as its chat, nothing of a chat thread's own. */
function threadOf(job: JobRecord, messages: ChatMessage[]): ThreadRecord {
  return { key: jobThreadKey(job.id), chat: job.origin, messages, groupContext: [], usage: zeroUsage(), turns: 0, lastIteration: 0, updatedAt: Date.now(), inbox: [] };
}
