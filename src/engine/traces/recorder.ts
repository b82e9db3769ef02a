/**
 * Records the trace of every chat turn, job step and routine firing from the
 * agent's events: a turn's model calls, tool calls, approval waits and
 * deliveries become its spans (matched by thread key), a job's steps begin at
 * each of its model calls, and a routine's firing is one span. Finished traces
 * are written to the store in batches, off the turn's path, and kept
 * `console.traceDays` days (see {@link TraceArchive}).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.js';
import type { AgentEventMap, AgentEvents } from '../events.js';
import type { TraceArchive } from './archive.js';
import type { Trace, TraceReader, TraceSpan, TraceSummary } from './types.js';

/** Spans kept per trace: a runaway turn's trace stays bounded. */
export const MAX_SPANS = 500;
/** How long an approval answered with no turn of its thread open waits for that turn (it resumes the work). */
const ANSWERED_KEPT_MS = 60_000;
/** Model calls that begin a job's step. */
const STEP_PURPOSES = new Set<AgentEventMap['model.request']['purpose']>(['job_step', 'planning', 'completion_check']);

/** Options of a {@link TraceRecorder}. */
export interface RecorderOptions {
  log: Logger;
  /** This instance's name, on each trace (several instances share the store). */
  instance?: string;
  now?: () => number;
}

/** Builds traces from the agent's events and hands the finished ones to the archive. */
export class TraceRecorder implements TraceReader {
  /** The trace under way in each thread. */
  private readonly open = new Map<string, Trace>();
  /** Turns ended whose final message is still being sent (after the turn, outside its slot). */
  private readonly delivering = new Map<string, Trace>();
  /** Approval questions asked, by thread and tool: when. */
  private readonly asked = new Map<string, number>();
  /** Approval waits that ended while their thread had no trace open: the turn they resume takes them. */
  private readonly answered = new Map<string, TraceSpan[]>();
  private readonly listeners = new Set<(trace: Trace) => void>();
  private readonly unsubscribe: (() => void)[];
  private readonly now: () => number;

  constructor(
    events: AgentEvents,
    private readonly archive: TraceArchive,
    private readonly options: RecorderOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.unsubscribe = [
      events.on('turn.started', (event) => this.begin('turn', event.thread, event.userId, this.now())),
      events.on('turn.ended', (event) => this.ended(event.thread, event.outcome)),
      events.on('turn.delivered', (event) => this.delivered(event.thread)),
      events.on('model.request', (event) => this.modelCall(event)),
      events.on('tool.call', (event) =>
        this.add(event.thread, { kind: 'tool', name: event.tool, startedAt: this.now() - event.durationMs, durationMs: event.durationMs, attributes: { status: event.status }, ...(event.status === 'ok' ? {} : { error: event.status }) }),
      ),
      events.on('message.out', (event) =>
        this.add(event.thread, { kind: 'delivery', name: event.type, startedAt: this.now() - event.durationMs, durationMs: event.durationMs, attributes: { channel: event.channel, ok: event.ok }, ...(event.ok ? {} : { error: 'not delivered' }) }),
      ),
      events.on('approval', (event) => this.approval(event)),
      events.on('job.run', (event) => {
        if (event.phase === 'ended') this.finish(event.thread, event.outcome ?? 'ok');
      }),
      events.on('routine.fired', (event) => this.routine(event)),
    ];
  }

  recent(options?: { thread?: string; limit?: number }): Promise<TraceSummary[]> {
    return this.archive.recent(options);
  }

  get(id: string): Promise<Trace | undefined> {
    return this.archive.get(id);
  }

  onTrace(listener: (trace: Trace) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops listening; the traces finished so far are written. */
  async close(): Promise<void> {
    for (const stop of this.unsubscribe) stop();
    await this.archive.flush();
  }

  private begin(kind: Trace['kind'], thread: string, userId: string | undefined, startedAt: number): Trace {
    // A trace left open (its end was never reported) ends where the next begins.
    this.delivered(thread);
    if (this.open.has(thread)) this.finish(thread, 'ended');
    const trace: Trace = { id: randomUUID(), kind, thread, ...(userId ? { userId } : {}), ...(this.options.instance ? { instance: this.options.instance } : {}), startedAt, durationMs: 0, outcome: 'running', spans: [] };
    const waits = this.answered.get(thread);
    if (waits) {
      this.answered.delete(thread);
      trace.spans.push(...waits.filter((span) => span.startedAt + span.durationMs > startedAt - ANSWERED_KEPT_MS));
    }
    this.open.set(thread, trace);
    return trace;
  }

  /** A turn ended: its trace waits for the final message's delivery. */
  private ended(thread: string, outcome: string): void {
    const trace = this.open.get(thread);
    if (!trace) return;
    this.open.delete(thread);
    trace.outcome = outcome;
    this.delivering.set(thread, trace);
  }

  private delivered(thread: string): void {
    const trace = this.delivering.get(thread);
    if (!trace) return;
    this.delivering.delete(thread);
    trace.durationMs = Math.max(0, this.now() - trace.startedAt);
    this.publish(trace);
  }

  private finish(thread: string, outcome: string): void {
    const trace = this.open.get(thread);
    if (!trace) return;
    this.open.delete(thread);
    trace.outcome = outcome;
    trace.durationMs = Math.max(0, this.now() - trace.startedAt);
    this.publish(trace);
  }

  private publish(trace: Trace): void {
    for (const listener of this.listeners) {
      try {
        listener(trace);
      } catch (error) {
        this.options.log.warn({ err: error }, 'trace listener failed');
      }
    }
    this.archive.keep(trace);
  }

  private add(thread: string, span: TraceSpan): void {
    const trace = this.open.get(thread) ?? this.delivering.get(thread);
    if (trace && trace.spans.length < MAX_SPANS) trace.spans.push(span);
  }

  private modelCall(event: AgentEventMap['model.request']): void {
    const startedAt = this.now() - event.durationMs;
    // A job's step begins with its model call and lasts until the next one (or the run's end).
    if (STEP_PURPOSES.has(event.purpose) && event.thread.startsWith('job:')) this.begin('job_step', event.thread, undefined, startedAt);
    const attributes: TraceSpan['attributes'] = { purpose: event.purpose, inputTokens: event.inputTokens, outputTokens: event.outputTokens };
    if (event.costUsd !== undefined) attributes.costUsd = event.costUsd;
    this.add(event.thread, { kind: event.purpose === 'compaction' ? 'compaction' : 'model', name: event.model, startedAt, durationMs: event.durationMs, attributes, ...(event.error ? { error: event.error } : {}) });
  }

  private approval(event: AgentEventMap['approval']): void {
    const key = `${event.thread}\u0000${event.tool}`;
    const now = this.now();
    if (event.status === 'requested') {
      this.asked.set(key, now);
      return;
    }
    const askedAt = this.asked.get(key);
    if (askedAt === undefined) return;
    this.asked.delete(key);
    const span: TraceSpan = { kind: 'approval', name: `approval of ${event.tool}`, startedAt: askedAt, durationMs: now - askedAt, attributes: { answer: event.status } };
    if (this.open.has(event.thread)) return this.add(event.thread, span);
    const recent = (kept: TraceSpan) => kept.startedAt + kept.durationMs > now - ANSWERED_KEPT_MS;
    // Waits whose work never resumed here (it resumed on another instance, or was stopped) are let go.
    for (const [thread, kept] of this.answered) if (!kept.some(recent)) this.answered.delete(thread);
    this.answered.set(event.thread, [...(this.answered.get(event.thread) ?? []).filter(recent), span]);
  }

  private routine(event: AgentEventMap['routine.fired']): void {
    const span: TraceSpan = event.jobId
      ? { kind: 'job', name: `job ${event.jobId}`, startedAt: event.startedAt, durationMs: event.durationMs, attributes: { job: event.jobId } }
      : { kind: 'delivery', name: event.result, startedAt: event.startedAt, durationMs: event.durationMs, attributes: { routine: event.routine } };
    this.publish({
      id: randomUUID(),
      kind: 'routine',
      thread: event.thread,
      userId: event.userId,
      ...(this.options.instance ? { instance: this.options.instance } : {}),
      startedAt: event.startedAt,
      durationMs: event.durationMs,
      outcome: event.result,
      spans: [span],
    });
  }
}
