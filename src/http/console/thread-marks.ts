/**
 * What happened to a conversation besides its messages, for the console's
 * conversation view: a loop guard acting on a turn (a warning to the model, a
 * forced answer, the Continue/Stop question, a stop) and the history being
 * compacted. Heard from the agent's events by this instance and kept in memory,
 * bounded: the latest marks of the latest threads.
 */
import type { AgentEvents, GuardAction } from '../../engine/events.js';

/** Marks kept per thread. */
const MARKS_PER_THREAD = 30;
/** Threads whose marks are kept; the one marked longest ago is dropped first. */
const THREADS = 500;

/** One thing that happened to a thread. */
export type ThreadMark =
  | { at: number; kind: 'guard'; action: GuardAction; guard: string; summary?: string }
  | { at: number; kind: 'compaction'; before: number; after: number; forced: boolean };

/** The marks of the recent threads; see the module comment. */
export class ThreadMarks {
  private readonly marks = new Map<string, ThreadMark[]>();

  /** Listens to the agent's events; returns the function that stops listening. */
  follow(events: AgentEvents): () => void {
    const offs = [
      events.on('guard', ({ thread, ...fired }) => this.add(thread, { at: Date.now(), kind: 'guard', ...fired })),
      events.on('compaction', ({ thread, ...compacted }) => this.add(thread, { at: Date.now(), kind: 'compaction', ...compacted })),
    ];
    return () => offs.forEach((off) => off());
  }

  /** The marks of `thread`, oldest first. */
  of(thread: string): readonly ThreadMark[] {
    return this.marks.get(thread) ?? [];
  }

  private add(thread: string, mark: ThreadMark): void {
    const list = [...(this.marks.get(thread) ?? []), mark].slice(-MARKS_PER_THREAD);
    this.marks.delete(thread);
    this.marks.set(thread, list);
    if (this.marks.size > THREADS) this.marks.delete(this.marks.keys().next().value as string);
  }
}
