/**
 * Long polling with getUpdates. Our own loop rather than `bot.start()`, so
 * that it resumes from the persisted offset, backs off on failures without
 * ever giving up on a transient one, and stops at once: `stop()` aborts the
 * long poll in flight instead of waiting for Telegram's timeout.
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

  constructor(private readonly deps: PollerDeps) {}

  /** Starts polling in the background. */
  start(): void {
    this.offset = this.deps.initialOffset();
    this.loop = this.run();
  }

  /** Aborts the poll in flight and waits for the loop to end. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.abort.signal.aborted) {
      try {
        const updates = await this.deps.api.getUpdates(
          { offset: this.offset, timeout: this.deps.timeoutSeconds, allowed_updates: [...ALLOWED_UPDATES] },
          grammySignal(this.abort.signal),
        );
        failures = 0;
        await this.handleAll(updates);
      } catch (error) {
        if (this.abort.signal.aborted) break;
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
