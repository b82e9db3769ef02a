/**
 * Where thread records live. {@link ThreadHistory} keeps the working copy in
 * memory and hands each write to a storage with what changed since the last
 * one, so a turn writes its new messages, not the whole thread.
 */
import type { ThreadRecord } from './thread-record.js';

/** What a write changes besides the record's small fields. */
export interface ThreadDelta {
  /**
   * Index in `record.messages` from which the messages are new since the last
   * write of this thread: the stored messages are the record's first `from`.
   * `0` with `rewrite` set when the history was replaced (compaction, `/new`,
   * a repair) or nothing is known of what is stored.
   */
  from: number;
  /** The stored messages no longer match the record's prefix: write them all again. */
  rewrite: boolean;
  /**
   * Inbox ids the write takes out of the thread's inbox (they are in the
   * history now). Already gone from `record.inbox`; for a storage that keeps
   * the inbox apart from the record.
   */
  consumed: readonly string[];
}

/** Persistence of thread records. */
export interface ThreadStorage {
  /** The thread's stored record (messages and inbox included), if any. */
  read(key: string): Promise<ThreadRecord | undefined>;
  /**
   * Writes the record's small fields and the messages named by `delta`; the
   * record read next is this one. A storage may store more than `delta` names
   * (it may know better what it holds), never less. `record.messages` must not
   * change until the returned promise settles. Writes of one thread do not overlap.
   */
  write(key: string, record: ThreadRecord, delta: ThreadDelta): Promise<void>;
  /**
   * Whether this process may still act for the thread (run its next tool
   * batch, send its next message): where instances share the store, while this
   * one's lease on the thread is current, asked of the store. A storage of one
   * process has none: it always may.
   */
  holdsLease?(key: string): Promise<boolean>;
}
