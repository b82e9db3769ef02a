/**
 * The daily cost limit as a budget that model calls book against
 * (`agent.dailyCostLimitUsd`). Before a call its estimated cost is booked,
 * atomically, against its person's day; after it the booking is settled with
 * the real cost, or released when the call failed. A call may be booked while
 * what the person spent today plus what their running calls have booked is
 * under the limit, so calls made at the same time get no more than calls made
 * one by one would (as long as each estimate covers its call's cost).
 *
 * Two implementations: {@link LocalCostBudget} for one process (SQLite and
 * Postgres stores have one instance each), and `RedisCostBudget` in
 * `cluster/cost-budget.ts` for instances sharing a Redis store.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/schema.js';
import { KeyedMutex } from '../store/mutex.js';
import type { UsageLedger } from './usage.js';

/** One call's estimated cost, held against its person's limit until the call is settled. */
export interface CostBooking {
  /** Qualified id of the person it counts toward. */
  userId: string;
  /** Where the booking is kept (its person and day, for the Redis budget). */
  key: string;
  id: string;
  usd: number;
}

/** Books, settles and releases the estimated cost of model calls against each person's daily limit. */
export interface CostBudget {
  /**
   * Books `estimateUsd` for a call of `userId` if what they spent today plus
   * what is booked (bookings past their expiry left out) is under the limit;
   * undefined when it is not and the call must not be made.
   */
  book(userId: string, estimateUsd: number): Promise<CostBooking | undefined>;
  /** The call was made and cost `costUsd` (already in the usage ledger): the booking ends and the cost counts as spent. */
  settle(booking: CostBooking, costUsd: number): Promise<void>;
  /** The call failed: the booking ends and nothing is spent. */
  release(booking: CostBooking): Promise<void>;
}

/** What a booking outlives the longest call by. */
const EXPIRY_MARGIN_MS = 120_000;

/**
 * How long a booking holds when it is never settled. Only a process killed in
 * the middle of a call leaves one behind (a call that fails releases its
 * booking); it must not block its person forever, nor end before a call that
 * is still running: every attempt's time limit and every wait between the
 * retries, plus two minutes.
 */
export function bookingTtlMs(llm: Pick<Config['llm'], 'timeoutMs' | 'maxRetries' | 'retryMaxDelayMs'>): number {
  return (llm.maxRetries + 1) * llm.timeoutMs + llm.maxRetries * llm.retryMaxDelayMs + EXPIRY_MARGIN_MS;
}

/** A booking as it is held: its amount and when it lapses. */
interface Held {
  usd: number;
  until: number;
}

/**
 * The budget of one process. What a person spent is the usage ledger's total
 * (exact in the one process that writes it); bookings are held in memory, as
 * the calls they stand for are. One person's check and booking run one at a
 * time. A call's cost is in the ledger before its booking ends, and a check
 * reads the bookings before the ledger, so it counts a call settling meanwhile
 * once or twice, never not at all.
 */
export class LocalCostBudget implements CostBudget {
  private readonly mutex = new KeyedMutex();
  private readonly held = new Map<string, Map<string, Held>>();

  constructor(
    private readonly usage: UsageLedger,
    private readonly limitUsd: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  book(userId: string, estimateUsd: number): Promise<CostBooking | undefined> {
    return this.mutex.run(userId, async () => {
      const bookings = this.held.get(userId) ?? new Map<string, Held>();
      let booked = 0;
      for (const [id, booking] of bookings) {
        if (booking.until <= this.now()) bookings.delete(id);
        else booked += booking.usd;
      }
      // Read after the bookings: a call settled in between is in the ledger by then.
      const spent = (await this.usage.userToday(userId)).costUsd;
      if (spent + booked >= this.limitUsd) return undefined;
      const id = randomUUID();
      bookings.set(id, { usd: estimateUsd, until: this.now() + this.ttlMs });
      this.held.set(userId, bookings);
      return { userId, key: userId, id, usd: estimateUsd };
    });
  }

  settle(booking: CostBooking): Promise<void> {
    return this.release(booking);
  }

  release(booking: CostBooking): Promise<void> {
    const bookings = this.held.get(booking.key);
    bookings?.delete(booking.id);
    if (bookings?.size === 0) this.held.delete(booking.key);
    return Promise.resolve();
  }
}
