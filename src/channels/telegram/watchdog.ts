/**
 * The long poll's watchdog. A poll can hang with its connection still open
 * (a proxy that stopped forwarding, a half-dead socket): nothing fails, and
 * nothing arrives. When no getUpdates has completed for longer than the
 * long-poll timeout plus a grace, the channel reports itself not receiving and
 * the watchdog replaces the poll in flight with a new one, again after each
 * further window of silence, until a poll completes.
 */
import type { Logger } from '../../log.js';
import type { ChannelHealth } from '../types.js';

/** How often the watchdog looks at most; small windows (tests) are checked more often. */
const MAX_CHECK_INTERVAL_MS = 5_000;

/** What the watchdog watches: a {@link Poller}. */
export interface WatchedPoll {
  /** When a poll last completed, in milliseconds since the epoch. */
  readonly lastCompletedAt: number;
  /** Abandons the poll in flight and starts a new one. */
  reconnect(): void;
}

/** Settings of {@link PollWatchdog}. */
export interface PollWatchdogOptions {
  /** Silence after which the channel counts as not receiving: the long-poll timeout plus a grace. */
  stallAfterMs: number;
  log: Logger;
  /** The clock (tests may move it). */
  now?: () => number;
}

/** Watches one poller from `start()` to `stop()`. */
export class PollWatchdog {
  private timer: NodeJS.Timeout | undefined;
  /** When the watchdog last replaced the poll. */
  private reconnectedAt = 0;
  /** The completion time of the stall already reported, so that each stall is warned about once. */
  private reported: number | undefined;
  private readonly now: () => number;

  constructor(
    private readonly poll: WatchedPoll,
    private readonly options: PollWatchdogOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Starts looking; the timer does not keep the process alive. */
  start(): void {
    const every = Math.max(10, Math.min(MAX_CHECK_INTERVAL_MS, Math.floor(this.options.stallAfterMs / 4)));
    this.timer = setInterval(() => this.check(), every);
    this.timer.unref();
  }

  /** Stops looking. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Ready while a poll has completed within the window; else the reason. */
  health(): ChannelHealth {
    const silentMs = this.now() - this.poll.lastCompletedAt;
    if (silentMs <= this.options.stallAfterMs) return { ready: true };
    return { ready: false, reason: `telegram: no long poll has completed for ${Math.round(silentMs / 1000)} s; reconnecting` };
  }

  /** Reconnects once per window of silence; says when receiving resumes. */
  check(): void {
    const lastCompletedAt = this.poll.lastCompletedAt;
    if (this.health().ready) {
      if (this.reported !== undefined) {
        this.options.log.info('telegram: a long poll completed again; receiving');
        this.reported = undefined;
      }
      return;
    }
    if (this.now() - Math.max(lastCompletedAt, this.reconnectedAt) <= this.options.stallAfterMs) return;
    if (this.reported !== lastCompletedAt) {
      this.reported = lastCompletedAt;
      const silentSeconds = Math.round((this.now() - lastCompletedAt) / 1000);
      this.options.log.warn({ silentSeconds }, `telegram: no long poll has completed for ${silentSeconds} s; reconnecting`);
    }
    this.reconnectedAt = this.now();
    this.poll.reconnect();
  }
}
