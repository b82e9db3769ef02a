/**
 * Which threads have unfinished work: a turn running, or messages accepted and
 * not yet answered. The details live in each thread's record (its inbox and
 * open turn); this index is how start-up finds them again after a crash or a
 * shutdown without reading every thread.
 */
import { z } from 'zod';
import type { Logger } from '../log.js';
import type { Namespace, Store } from '../store/store.js';

const INDEX_KEY = 'open';

/** The persisted set of threads with unfinished work. */
export class TurnJournal {
  private readonly index: Namespace<string[]>;
  private readonly open = new Set<string>();
  /** The write in flight, if any, and whether another must follow it. */
  private writing: Promise<void> | undefined;
  private dirty = false;

  constructor(
    store: Store,
    private readonly log: Logger,
  ) {
    this.index = store.namespace('turn-journal', z.array(z.string()), 1);
  }

  /** The threads left unfinished by the previous run (and still open in this one). */
  async load(): Promise<string[]> {
    for (const key of (await this.index.get(INDEX_KEY)) ?? []) this.open.add(key);
    return [...this.open];
  }

  /** Marks a thread as having unfinished work. */
  mark(key: string): void {
    if (this.open.has(key)) return;
    this.open.add(key);
    this.changed();
  }

  /** The thread's work is done. */
  clear(key: string): void {
    if (!this.open.delete(key)) return;
    this.changed();
  }

  /** Resolves once the index on disk holds every mark made before the call. */
  async durable(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private changed(): void {
    this.dirty = true;
    // Writes coalesce: while one is in flight, every change waits for the next,
    // which carries all of them.
    this.writing ??= this.writeAll();
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.dirty) {
        this.dirty = false;
        try {
          await this.index.set(INDEX_KEY, [...this.open]);
        } catch (error) {
          this.log.error({ err: error }, 'turn journal not written');
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
