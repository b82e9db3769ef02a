/**
 * The trace of one unit of work (a chat turn, a job's step, a routine's
 * firing): the spans of what it waited on, each with its start and length,
 * kept `console.traceDays` days and drawn by the console as a waterfall.
 */

/** What set a trace going. */
export type TraceKind = 'turn' | 'job_step' | 'routine';

/** What a span timed. */
export type SpanKind = 'model' | 'tool' | 'approval' | 'delivery' | 'compaction' | 'job';

/** One timed part of a trace. */
export interface TraceSpan {
  kind: SpanKind;
  /** What the person reads: the model's name, the tool's name, "approval of shell", "send". */
  name: string;
  /** Epoch ms. */
  startedAt: number;
  durationMs: number;
  /** Tokens, cost, the call's status: numbers, short texts and flags only, never arguments or secrets. */
  attributes: Record<string, string | number | boolean>;
  /** Why it failed, when it did (an error kind, not a message carrying data). */
  error?: string;
}

/** The trace of one unit of work, as stored. */
export interface Trace {
  /** Unique across instances. */
  id: string;
  kind: TraceKind;
  /** The thread key (`channel:chat[:sub]`), or the job's or routine's id for background work. */
  thread: string;
  /** The qualified user the work ran for, when known. */
  userId?: string;
  /** The instance that recorded it. */
  instance?: string;
  startedAt: number;
  durationMs: number;
  /** How it ended: the turn's outcome (`response`, `stopped`, ...), or `ok` / `failed`. */
  outcome: string;
  spans: TraceSpan[];
}

/** A trace without its spans, for lists. */
export type TraceSummary = Omit<Trace, 'spans'> & { spanCount: number; inputTokens: number; outputTokens: number; costUsd: number };

/** How the console reads traces. */
export interface TraceReader {
  /** The newest first; of one thread when given. */
  recent(options?: { thread?: string; limit?: number }): Promise<TraceSummary[]>;
  /** One trace, whole; undefined when unknown or expired. */
  get(id: string): Promise<Trace | undefined>;
  /** Called with each trace this instance finishes; returns the unsubscribe function. */
  onTrace(listener: (trace: Trace) => void): () => void;
}
