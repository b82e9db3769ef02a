/**
 * Live updates for open console pages (server-sent events): when a turn
 * starts or ends, a tool call or an approval happens, a loop guard acts, the
 * history is compacted, or a trace is recorded,
 * each page that may see the thread is told which thread changed, and reads
 * it again. Only thread keys and event kinds travel, never content; a burst
 * of events of one thread is sent as one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentEvents } from '../../engine/events.js';
import type { TraceReader } from '../../engine/traces/types.js';

/** How long events of one thread are gathered before a page is told. */
const GATHER_MS = 100;
/** A comment line this often keeps proxies from closing the stream. */
const HEARTBEAT_MS = 15_000;

/** One change a page hears of. */
export interface LiveChange {
  thread: string;
  kind: 'turn' | 'tool' | 'approval' | 'trace' | 'work' | 'guard' | 'compaction';
}

type Listener = (change: LiveChange) => void;

/** Fans the agent's events out to the open streams. */
export class LiveFeed {
  private readonly listeners = new Set<Listener>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly offs: Array<() => void> = [];

  constructor(events: AgentEvents, traces?: TraceReader) {
    this.offs.push(
      events.on('turn.started', (event) => this.changed({ thread: event.thread, kind: 'turn' })),
      events.on('turn.ended', (event) => this.changed({ thread: event.thread, kind: 'turn' })),
      events.on('tool.call', (event) => this.changed({ thread: event.thread, kind: 'tool' })),
      events.on('approval', (event) => this.changed({ thread: event.thread, kind: 'approval' })),
      events.on('guard', (event) => this.changed({ thread: event.thread, kind: 'guard' })),
      events.on('compaction', (event) => this.changed({ thread: event.thread, kind: 'compaction' })),
    );
    if (traces) this.offs.push(traces.onTrace((trace) => this.changed({ thread: trace.thread, kind: 'trace' })));
  }

  /** Serves one stream to a page; `sees` filters the threads it is told of. */
  serve(request: IncomingMessage, response: ServerResponse, headers: Record<string, string>, sees: (thread: string) => Promise<boolean>): void {
    response.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    response.write('retry: 3000\n\n');
    const listener: Listener = (change) => {
      void sees(change.thread).then(
        (visible) => visible && response.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`),
        () => undefined,
      );
    };
    this.listeners.add(listener);
    const heartbeat = setInterval(() => response.write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    request.on('close', () => {
      clearInterval(heartbeat);
      this.listeners.delete(listener);
    });
  }

  /** Stops listening to the agent. */
  close(): void {
    for (const off of this.offs) off();
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.listeners.clear();
  }

  private changed(change: LiveChange): void {
    const id = `${change.thread}\n${change.kind}`;
    if (this.pending.has(id)) return;
    const timer = setTimeout(() => {
      this.pending.delete(id);
      for (const listener of this.listeners) listener(change);
    }, GATHER_MS);
    timer.unref();
    this.pending.set(id, timer);
  }
}
