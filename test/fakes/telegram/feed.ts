/**
 * The fake's update queue, delivered the two ways Telegram does: getUpdates
 * long polling (an `offset` confirms and drops older updates, `timeout` holds
 * the request until an update arrives, a second poll ends the first with 409)
 * or POSTs to a webhook with the secret token header. `stall()` makes polls
 * hang unanswered with their connections open, as a dead proxy would.
 */
import type { Update } from 'grammy/types';
import { ApiFailure } from './failure.js';

/** A held getUpdates request. */
interface Waiter {
  limit: number;
  resolve(updates: Update[]): void;
  reject(failure: ApiFailure): void;
  timer: NodeJS.Timeout;
}

/** A webhook registered with setWebhook. */
export interface WebhookRegistration {
  url: string;
  secretToken?: string;
}

/** What a webhook POST got back. */
export interface WebhookDelivery {
  updateId: number;
  status: number;
}

/** Updates waiting for the bot. */
export class UpdateFeed {
  private pending: Update[] = [];
  private waiter: Waiter | undefined;
  private nextId = 500_000;
  private delivering = false;
  private closed = false;
  private stalled = false;
  /** Polls held unanswered while stalled. */
  private readonly hung = new Set<(updates: Update[]) => void>();
  /** How many getUpdates were answered 409 Conflict. */
  conflicts = 0;
  private registration: WebhookRegistration | undefined;
  /** Every update id handed to the bot, once per delivery. */
  readonly delivered: number[] = [];
  /** The highest offset a getUpdates carried: the updates below it are confirmed, never delivered again. */
  confirmedOffset = 0;
  readonly webhookDeliveries: WebhookDelivery[] = [];

  /** The webhook set with setWebhook, if any. */
  get webhook(): WebhookRegistration | undefined {
    return this.registration;
  }

  /** setWebhook / deleteWebhook: switches between webhook delivery and getUpdates. */
  setWebhook(registration: WebhookRegistration | undefined): void {
    this.registration = registration;
    if (registration) void this.deliverToWebhook();
  }

  /** Queues an update (with a fresh update_id unless one is given) and wakes a waiting poll. */
  push(update: Omit<Update, 'update_id'> & { update_id?: number }): number {
    const full = { ...update, update_id: update.update_id ?? this.nextId++ } as Update;
    this.nextId = Math.max(this.nextId, full.update_id + 1);
    this.pending.push(full);
    if (this.webhook) void this.deliverToWebhook();
    else this.wake();
    return full.update_id;
  }

  /** getUpdates. */
  poll(offset: number | undefined, limit = 100, timeoutSeconds = 0, onAbort: (cancel: () => void) => void): Promise<Update[]> {
    if (this.webhook) {
      this.conflicts++;
      throw new ApiFailure(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    }
    if (this.stalled) return this.hang(onAbort);
    if (offset !== undefined && offset > 0) {
      this.pending = this.pending.filter((update) => update.update_id >= offset);
      this.confirmedOffset = Math.max(this.confirmedOffset, offset);
    }
    if (this.waiter) {
      this.conflicts++;
      this.waiter.reject(new ApiFailure(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'));
    }
    this.clearWaiter();
    const ready = this.take(limit);
    if (ready.length || timeoutSeconds <= 0 || this.closed) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { limit, resolve, reject, timer: setTimeout(() => this.finish(waiter, []), timeoutSeconds * 1000) };
      this.waiter = waiter;
      onAbort(() => {
        if (this.waiter === waiter) this.clearWaiter();
        this.hung.delete(resolve);
      });
    });
  }

  /** From now on polls hang unanswered (the one held now too), and nothing is delivered. */
  stall(): void {
    this.stalled = true;
    const waiter = this.waiter;
    if (!waiter) return;
    this.clearWaiter();
    this.hung.add(waiter.resolve);
  }

  /** Answers the hung polls that are still open (empty), and delivers again. */
  resume(): void {
    this.stalled = false;
    this.releaseHung();
  }

  /** Ends every held poll and stops webhook delivery. */
  close(): void {
    this.closed = true;
    this.releaseHung();
    if (this.waiter) this.finish(this.waiter, []);
  }

  private hang(onAbort: (cancel: () => void) => void): Promise<Update[]> {
    return new Promise((resolve) => {
      this.hung.add(resolve);
      onAbort(() => this.hung.delete(resolve));
    });
  }

  private releaseHung(): void {
    for (const resolve of this.hung) resolve([]);
    this.hung.clear();
  }

  private take(limit: number): Update[] {
    const ready = this.pending.slice(0, limit);
    for (const update of ready) this.delivered.push(update.update_id);
    return ready;
  }

  private wake(): void {
    const waiter = this.waiter;
    if (waiter) this.finish(waiter, this.take(waiter.limit));
  }

  private finish(waiter: Waiter, updates: Update[]): void {
    if (this.waiter === waiter) this.clearWaiter();
    waiter.resolve(updates);
  }

  private clearWaiter(): void {
    if (this.waiter) clearTimeout(this.waiter.timer);
    this.waiter = undefined;
  }

  /** POSTs pending updates one at a time, as Telegram does; a refused one is retried a few times. */
  private async deliverToWebhook(): Promise<void> {
    if (this.delivering) return;
    this.delivering = true;
    try {
      let attempts = 0;
      while (this.webhook && this.pending.length && !this.closed) {
        const update = this.pending[0]!;
        const status = await this.post(this.webhook, update);
        this.webhookDeliveries.push({ updateId: update.update_id, status });
        this.delivered.push(update.update_id);
        if (status === 200 || ++attempts >= 5) {
          this.pending.shift();
          attempts = 0;
        } else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      this.delivering = false;
    }
  }

  private async post(webhook: WebhookRegistration, update: Update): Promise<number> {
    try {
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(webhook.secretToken ? { 'X-Telegram-Bot-Api-Secret-Token': webhook.secretToken } : {}),
        },
        body: JSON.stringify(update),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 0;
    }
  }
}
