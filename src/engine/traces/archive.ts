/**
 * Where finished traces are kept: each trace under its id (expiring after
 * `console.traceDays`), the newest summaries of each thread, and the
 * summaries of each hour, so that the console lists the latest traces of the
 * whole bot (of every instance sharing the store) without a scan. Writes are
 * batched (one flush a second at most) and never awaited by the work traced;
 * the hours past the kept days are deleted with their traces.
 */
import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { Namespace, Store } from '../../store/store.js';
import type { Trace, TraceSummary } from './types.js';

/** Summaries kept per thread. */
export const THREAD_SUMMARIES = 50;
/** Summaries kept per hour for the bot-wide list (a busier hour keeps its latest). */
export const HOUR_SUMMARIES = 2_000;
const HOUR_MS = 3_600_000;
/** How far before the kept days a start looks for hours left undeleted (the bot was down when they fell due). */
const CATCH_UP_HOURS = 7 * 24;

const SpanSchema = z.object({
  kind: z.enum(['model', 'tool', 'approval', 'delivery', 'compaction', 'job']),
  name: z.string(),
  startedAt: z.number(),
  durationMs: z.number(),
  attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  error: z.string().optional(),
});
const TraceFields = {
  id: z.string(),
  kind: z.enum(['turn', 'job_step', 'routine']),
  thread: z.string(),
  userId: z.string().optional(),
  instance: z.string().optional(),
  startedAt: z.number(),
  durationMs: z.number(),
  outcome: z.string(),
};
const TraceSchema = z.object({ ...TraceFields, spans: z.array(SpanSchema) });
const SummarySchema = z.object({ ...TraceFields, spanCount: z.number(), inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() });

/** A trace's line in lists: its totals instead of its spans. */
export function summaryOf(trace: Trace): TraceSummary {
  const { spans, ...rest } = trace;
  let inputTokens = 0;
  let outputTokens = 0;
  let costUsd = 0;
  for (const span of spans) {
    if (span.kind !== 'model' && span.kind !== 'compaction') continue;
    inputTokens += Number(span.attributes.inputTokens ?? 0);
    outputTokens += Number(span.attributes.outputTokens ?? 0);
    costUsd += Number(span.attributes.costUsd ?? 0);
  }
  return { ...rest, spanCount: spans.length, inputTokens, outputTokens, costUsd };
}

/** The hour a time falls in, as the key of its list. */
function hourOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 13);
}

/** Options of a {@link TraceArchive}. */
export interface ArchiveOptions {
  /** Days a trace is kept; 0 keeps none (the console's live view still shows them as they finish). */
  days: number;
  log: Logger;
  /** The longest a finished trace waits to be written. */
  flushMs?: number;
  now?: () => number;
}

/** The stored traces. */
export class TraceArchive {
  private readonly traces: Namespace<Trace>;
  private readonly byThread: Namespace<TraceSummary[]>;
  private readonly byHour: Namespace<TraceSummary[]>;
  private readonly now: () => number;
  private pending: Trace[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** The last hour whose due deletions were made. */
  private prunedAt: number | undefined;

  constructor(
    store: Store,
    private readonly options: ArchiveOptions,
  ) {
    this.traces = store.namespace('trace', TraceSchema);
    this.byThread = store.namespace('trace-thread', z.array(SummarySchema));
    this.byHour = store.namespace('trace-hour', z.array(SummarySchema));
    this.now = options.now ?? Date.now;
  }

  private get keptMs(): number {
    return this.options.days * 24 * HOUR_MS;
  }

  /** Queues a finished trace for the next write. */
  keep(trace: Trace): void {
    if (this.options.days <= 0) return;
    this.pending.push(trace);
    this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs ?? 1_000).unref();
  }

  /** Writes the queued traces (and deletes the hours that fell due); resolves when done. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing.then(() => this.write(batch)).catch((error: unknown) => this.options.log.warn({ err: error, traces: batch.length }, 'could not store traces'));
    return this.writing;
  }

  /** The newest first; of one thread when given; none older than the kept days. */
  async recent(options: { thread?: string; limit?: number } = {}): Promise<TraceSummary[]> {
    const limit = options.limit ?? 50;
    const since = this.now() - this.keptMs;
    if (options.thread) {
      const kept = (await this.byThread.get(options.thread)) ?? [];
      return kept.filter((summary) => summary.startedAt >= since).reverse().slice(0, limit);
    }
    const found: TraceSummary[] = [];
    for (let hour = this.now(); hour >= since - HOUR_MS && found.length < limit; hour -= HOUR_MS) {
      const kept = (await this.byHour.get(hourOf(hour))) ?? [];
      found.push(...kept.filter((summary) => summary.startedAt >= since).reverse());
    }
    return found.slice(0, limit);
  }

  async get(id: string): Promise<Trace | undefined> {
    const trace = await this.traces.get(id);
    return trace && trace.startedAt >= this.now() - this.keptMs ? trace : undefined;
  }

  private async write(batch: Trace[]): Promise<void> {
    if (batch.length) {
      const threads = new Map<string, TraceSummary[]>();
      const hours = new Map<string, TraceSummary[]>();
      for (const trace of batch) {
        const summary = summaryOf(trace);
        threads.set(trace.thread, [...(threads.get(trace.thread) ?? []), summary]);
        const hour = hourOf(trace.startedAt);
        hours.set(hour, [...(hours.get(hour) ?? []), summary]);
      }
      const append = (limit: number, added: TraceSummary[]) => (kept: TraceSummary[] = []) => [...kept, ...added].slice(-limit);
      await Promise.all([
        ...batch.map((trace) => this.traces.set(trace.id, trace, this.keptMs + HOUR_MS)),
        ...[...threads].map(([thread, added]) => this.byThread.update(thread, append(THREAD_SUMMARIES, added))),
        ...[...hours].map(([hour, added]) => this.byHour.update(hour, append(HOUR_SUMMARIES, added))),
      ]);
    }
    await this.prune();
  }

  /**
   * Deletes the hours past the kept days, with their traces (a store without
   * expiry, SQLite, would keep them otherwise). The first time, it looks a
   * week further back, for hours that fell due while the bot was down.
   */
  private async prune(): Promise<void> {
    const due = Math.floor((this.now() - this.keptMs) / HOUR_MS) - 1;
    if (this.prunedAt === due) return;
    const from = this.prunedAt === undefined ? due - CATCH_UP_HOURS : this.prunedAt + 1;
    this.prunedAt = due;
    for (let hour = from; hour <= due; hour += 1) {
      const key = hourOf(hour * HOUR_MS);
      const kept = await this.byHour.get(key);
      if (!kept) continue;
      await Promise.all(kept.map((summary) => this.traces.delete(summary.id)));
      await this.byHour.delete(key);
    }
  }
}
