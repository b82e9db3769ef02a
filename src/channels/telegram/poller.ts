/**
 * Long polling with getUpdates. Our own loop rather than `bot.start()`, so
 * that it resumes from the persisted offset, backs off on failures without
 * ever giving up on a transient one, and stops at once: `stop()` aborts the
 * long poll in flight instead of waiting for Telegram's timeout. It records
 * when a poll last completed, and `reconnect()` replaces a poll that hangs
 * (see watchdog.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Api } from 'grammy';
import type { Update } from 'grammy/types';
import type { Logger } from '../../log.js';
import { grammySignal } from './signal.js';
import { describeError, isUnauthorized } from './errors.js';

/** The update types pincer reads. */
export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;

/** Longest pause between two failed polls. */
const MAX_BACKOFF_MS = 30_000;

/** What {@link Poller} needs. */
export interface PollerDeps {
  api: Api;
  log: Logger;
  timeoutSeconds: number;
  retryDelayMs: number;
  /** The offset to start from (confirms what an earlier run handled). */
  initialOffset(): number | undefined;
  /** Handles one update; must return quickly (it only queues events). */
  handle(update: Update): Promise<void>;
  /** The token was rejected: polling cannot go on. */
  onFatal(reason: string): void;
}

/** A running getUpdates loop. */
export class Poller {
  private readonly abort = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private offset: number | undefined;
  /** Aborts the getUpdates request in flight, if one is. */
  private request: AbortController | undefined;
  private completedAt = Date.now();

  constructor(private readonly deps: PollerDeps) {}

  /** When a getUpdates last completed (with or without updates); the start counts as one. */
  get lastCompletedAt(): number {
    return this.completedAt;
  }

  /** Resolves when the loop ends: after `stop()`, or when the token was rejected. */
  get finished(): Promise<void> {
    return this.loop;
  }

  /** Starts polling in the background. */
  start(): void {
    this.offset = this.deps.initialOffset();
    this.completedAt = Date.now();
    this.loop = this.run();
  }

  /** Aborts the poll in flight and waits for the loop to end. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.request?.abort();
    await this.loop;
  }

  /**
   * Abandons the getUpdates in flight and sends a new one at once. Nothing
   * happens while the loop pauses after a failure: it is retrying already.
   */
  reconnect(): void {
    this.request?.abort();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.abort.signal.aborted) {
      const request = (this.request = new AbortController());
      try {
        const updates = await this.deps.api.getUpdates(
          { offset: this.offset, timeout: this.deps.timeoutSeconds, allowed_updates: [...ALLOWED_UPDATES] },
          grammySignal(request.signal),
        );
        this.request = undefined;
        this.completedAt = Date.now();
        failures = 0;
        await this.handleAll(updates);
      } catch (error) {
        this.request = undefined;
        if (this.abort.signal.aborted) break;
        if (request.signal.aborted) continue;
        if (isUnauthorized(error)) {
          this.deps.onFatal(describeError(error));
          break;
        }
        failures++;
        await this.backoff(error, failures);
      }
    }
  }

  private async handleAll(updates: Update[]): Promise<void> {
    for (const update of updates) {
      this.offset = Math.max(this.offset ?? 0, update.update_id + 1);
      await this.deps.handle(update);
    }
  }

  private async backoff(error: unknown, failures: number): Promise<void> {
    const delay = Math.min(MAX_BACKOFF_MS, this.deps.retryDelayMs * 2 ** (failures - 1));
    this.deps.log.warn({ error: describeError(error), retryInMs: delay }, 'telegram: getUpdates failed');
    await sleep(delay, undefined, { signal: this.abort.signal }).catch(() => undefined);
  }
}
