/**
 * Telegram's long poll as the duty of one elected instance: a second poller
 * would end the first with 409 Conflict, and be ended by it. The channel
 * campaigns in the background; an instance that is not elected stands by,
 * healthy, and still sends. Once elected, it catches up with what the previous
 * holder handled, deletes any webhook and polls under the watchdog; when the
 * duty is lost it stops polling at once (the long poll is aborted) and
 * campaigns again; when the channel stops, it resigns once its poll has ended,
 * so that the next holder never overlaps it.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Election, Leadership } from '../election.js';
import type { Logger } from '../../log.js';
import type { ChannelHealth } from '../types.js';
import { describeError } from './errors.js';
import { Poller, type PollerDeps } from './poller.js';
import { PollWatchdog } from './watchdog.js';

/** The duty's name in the election. */
export const POLLING_DUTY = 'telegram-poller';

/** Pause before campaigning again after a failed campaign or a failed start of polling. */
const RETRY_AFTER_MS = 5_000;

/** What {@link PollingDuty} needs. */
export interface PollingDutyDeps {
  election: Election;
  log: Logger;
  /** Silence after which the poll counts as stalled (see watchdog.ts). */
  stallAfterMs: number;
  /** The poller's settings, for each term of office. */
  poller: Omit<PollerDeps, 'onFatal'>;
  /** Gets ready to poll once elected: reloads the update ledger, deletes any webhook. Cut short when `signal` aborts. */
  prepare(signal: AbortSignal): Promise<void>;
  /** The token was rejected while polling: the duty ends for good. */
  onFatal(reason: string): void;
}

/** Campaigns for the long poll and polls while elected. */
export class PollingDuty {
  private readonly stopping = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  /** Watches the poll while this instance holds the duty. */
  private watchdog: PollWatchdog | undefined;
  private fatal: string | undefined;

  constructor(private readonly deps: PollingDutyDeps) {}

  /** Campaigns in the background; resolves at once. */
  start(): void {
    this.loop = this.run();
  }

  /** Stops polling (or campaigning), then gives the duty back. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** Not ready while holding the duty with a stalled poll, or once the token was rejected; a standby is ready. */
  health(): ChannelHealth {
    if (this.fatal) return { ready: false, reason: `telegram: polling stopped: ${this.fatal}` };
    return this.watchdog?.health() ?? { ready: true };
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted && !this.fatal) {
      const leadership = await this.campaign();
      if (!leadership) continue;
      let failed = false;
      try {
        await this.serve(leadership);
      } catch (error) {
        this.deps.log.error({ error: describeError(error) }, 'telegram: could not start polling; giving the duty back and trying again');
        failed = true;
      }
      // A duty already lost is not ours to give back.
      if (!leadership.lost.aborted) await this.resign(leadership);
      if (failed) await this.pause();
    }
  }

  /** The leadership once won; undefined when stopping, or after a failed campaign and a pause. */
  private async campaign(): Promise<Leadership | undefined> {
    try {
      return await this.deps.election.campaign(POLLING_DUTY, this.stopping.signal);
    } catch (error) {
      if (this.stopping.signal.aborted) return undefined;
      this.deps.log.warn({ error: describeError(error) }, 'telegram: the election for the long poll failed; trying again');
      await this.pause();
      return undefined;
    }
  }

  /** One term of office: polls until the duty is lost, the channel stops or the token is rejected. */
  private async serve(leadership: Leadership): Promise<void> {
    const over = AbortSignal.any([leadership.lost, this.stopping.signal]);
    if (over.aborted) return;
    this.deps.log.info('telegram: elected to poll for updates');
    await this.deps.prepare(over);
    if (over.aborted) return;
    const poller = new Poller({
      ...this.deps.poller,
      onFatal: (reason) => {
        this.fatal = reason;
        this.deps.onFatal(reason);
      },
    });
    const watchdog = new PollWatchdog(poller, { stallAfterMs: this.deps.stallAfterMs, log: this.deps.log });
    poller.start();
    watchdog.start();
    this.watchdog = watchdog;
    await Promise.race([once(over, 'abort'), poller.finished]);
    this.watchdog = undefined;
    watchdog.stop();
    await poller.stop();
    if (leadership.lost.aborted && !this.stopping.signal.aborted) {
      this.deps.log.warn('telegram: the polling duty was lost; polling stopped, standing by');
    }
  }

  private async resign(leadership: Leadership): Promise<void> {
    try {
      await leadership.resign();
    } catch (error) {
      this.deps.log.warn({ error: describeError(error) }, 'telegram: could not give the polling duty back; it lapses on its own');
    }
  }

  private async pause(): Promise<void> {
    await sleep(RETRY_AFTER_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}
