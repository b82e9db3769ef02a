/**
 * Where thread records live. {@link ThreadHistory} keeps the working copy in
 * memory and hands each write to a storage with what changed since the last
 * one, so a turn writes its new messages, not the whole thread.
 */
import type { ThreadRecord } from './history.js';

/** What a write changes besides the record's small fields. */
export interface ThreadDelta {
  /**
   * Index in `record.messages` from which the messages are new since the last
   * write of this thread. `0` with `rewrite` set when the history was replaced
   * (compaction, `/new`, a repair): the stored messages are all replaced.
   */
  from: number;
  /** The stored messages no longer match the record's prefix: write them all again. */
  rewrite: boolean;
  /** Inbox ids the write takes out of the thread's inbox (they are in the history now). */
  consumed: readonly string[];
}

/** Persistence of thread records. */
export interface ThreadStorage {
  /** The thread's stored record (messages and inbox included), if any. */
  read(key: string): Promise<ThreadRecord | undefined>;
  /** Writes the record's small fields and the messages named by `delta`. */
  write(key: string, record: ThreadRecord, delta: ThreadDelta): Promise<void>;
}
