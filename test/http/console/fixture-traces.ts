/**
 * A test fixture: an in-memory TraceReader holding made-up traces, standing in
 * for the trace recorder in the console's tests. `recordTurn` makes a trace
 * of a turn that just ended (a model call, a tool call, a delivery) and tells
 * the listeners, as the recorder will.
 */
import type { Trace, TraceReader, TraceSummary } from '../../../src/engine/traces/types.js';

/** See the module comment. */
export class FixtureTraces implements TraceReader {
  readonly traces: Trace[] = [];
  private readonly listeners = new Set<(trace: Trace) => void>();

  async recent(options: { thread?: string; limit?: number } = {}): Promise<TraceSummary[]> {
    return this.traces
      .filter((trace) => !options.thread || trace.thread === options.thread)
      .sort((a, b) => b.startedAt - a.startedAt)
      .slice(0, options.limit ?? 50)
      .map(({ spans, ...rest }) => ({
        ...rest,
        spanCount: spans.length,
        inputTokens: spans.reduce((sum, span) => sum + Number(span.attributes.inputTokens ?? 0), 0),
        outputTokens: spans.reduce((sum, span) => sum + Number(span.attributes.outputTokens ?? 0), 0),
        costUsd: spans.reduce((sum, span) => sum + Number(span.attributes.costUsd ?? 0), 0),
      }));
  }

  async get(id: string): Promise<Trace | undefined> {
    return this.traces.find((trace) => trace.id === id);
  }

  onTrace(listener: (trace: Trace) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds a made-up trace of a turn of `thread` and tells the listeners. */
  recordTurn(thread: string, tool = 'calculator'): Trace {
    const start = Date.now() - 1_500;
    const trace: Trace = {
      id: `trace-${this.traces.length + 1}`,
      kind: 'turn',
      thread,
      userId: 'test:owner',
      startedAt: start,
      durationMs: 1_500,
      outcome: 'response',
      spans: [
        { kind: 'model', name: 'fake-model', startedAt: start, durationMs: 600, attributes: { inputTokens: 120, outputTokens: 30, costUsd: 0.0012 } },
        { kind: 'tool', name: tool, startedAt: start + 600, durationMs: 200, attributes: { status: 'ok' } },
        { kind: 'model', name: 'fake-model', startedAt: start + 800, durationMs: 500, attributes: { inputTokens: 160, outputTokens: 12, costUsd: 0.0009 } },
        { kind: 'delivery', name: 'send', startedAt: start + 1_300, durationMs: 200, attributes: { parts: 1 } },
      ],
    };
    this.traces.push(trace);
    for (const listener of this.listeners) listener(trace);
    return trace;
  }
}
