/**
 * The overview's live counts, from the agent's events on this instance: turns
 * running now, and the errors of the last hour (failed model requests, tool
 * calls that errored or timed out, turns that ended in a failure).
 */
import type { AgentEvents } from '../../engine/events.js';

const HOUR_MS = 3_600_000;

/** See the module comment. */
export class ErrorCounter {
  private readonly times: number[] = [];
  private running = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts from `events`; returns the unsubscribe function. */
  follow(events: AgentEvents): () => void {
    const offs = [
      events.on('turn.started', () => (this.running += 1)),
      events.on('turn.ended', (ended) => {
        this.running = Math.max(0, this.running - 1);
        if (ended.outcome === 'failure' || ended.outcome === 'error') this.add();
      }),
      events.on('model.request', (request) => request.error && this.add()),
      events.on('tool.call', (call) => call.status === 'error' && this.add()),
    ];
    return () => offs.forEach((off) => off());
  }

  /** Turns running on this instance now. */
  turnsInFlight(): number {
    return this.running;
  }

  /** Errors in the last hour. */
  lastHour(): number {
    this.prune();
    return this.times.length;
  }

  private add(): void {
    this.times.push(this.now());
    this.prune();
  }

  private prune(): void {
    const since = this.now() - HOUR_MS;
    while (this.times.length && this.times[0]! < since) this.times.shift();
  }
}
