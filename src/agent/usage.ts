/**
 * Usage accounting: tokens and cost per user per day and in total per day, and
 * the per-user daily cost ceiling.
 */
import type { LlmResponse } from '../llm/types.js';
import type { Namespace, Store } from '../store/store.js';
import { UsageTotalsSchema, zeroUsage, type UsageTotals } from './history.js';

/** The UTC day of a time, `YYYY-MM-DD`. */
export function dayOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** Adds one response's usage to totals (in place) and returns them. */
export function addUsage(totals: UsageTotals, response: LlmResponse): UsageTotals {
  totals.inputTokens += response.usage.inputTokens;
  totals.outputTokens += response.usage.outputTokens;
  totals.cachedTokens += response.usage.cachedTokens;
  totals.costUsd += response.costUsd;
  totals.calls += 1;
  return totals;
}

/** How long usage changes wait in memory before they are written (they are also written on close). */
const FLUSH_DELAY_MS = 5_000;

/** Written totals kept in memory beyond this many are read again from the store when needed. */
const CACHE_SIZE = 5_000;

/**
 * Daily usage per user and in total. Totals live in memory once read and are
 * written back in the background: a model call costs no store round trip, and
 * the cost ceiling reads the in-memory total. A write adds what this process
 * counted since its last write to the stored total (an atomic update), and
 * takes back the sum: instances sharing a store count together, and each sees
 * the others' usage from its next write on.
 */
export class UsageLedger {
  private readonly days: Namespace<UsageTotals>;
  private readonly cache = new Map<string, Promise<UsageTotals>>();
  private readonly dirty = new Set<string>();
  /** Each total as last read from or written to the store: what is beyond it is this process's to add. */
  private readonly stored = new Map<string, UsageTotals>();
  /** The write of each total in flight: two writes of one total would add the same part twice. */
  private readonly writing = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** Totals being changed right now (between their read and the change), never evicted. */
  private readonly inUse = new Map<string, number>();

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.days = store.namespace('usage', UsageTotalsSchema, 1);
  }

  /** Records one model call for a user (qualified id); a background job's call is also counted apart. */
  async record(userId: string, response: LlmResponse, options: { job?: boolean } = {}): Promise<void> {
    const day = dayOf(this.now());
    const keys = [`user:${userId}:${day}`, `total:${day}`, ...(options.job ? [`jobs:${userId}:${day}`] : [])];
    for (const key of keys) {
      // Kept in memory from the read to the change: an eviction in between would lose it.
      this.inUse.set(key, (this.inUse.get(key) ?? 0) + 1);
      try {
        addUsage(await this.totals(key), response);
        this.dirty.add(key);
      } finally {
        const left = this.inUse.get(key)! - 1;
        if (left) this.inUse.set(key, left);
        else this.inUse.delete(key);
      }
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }

  /** A user's usage today. */
  async userToday(userId: string): Promise<UsageTotals> {
    return { ...(await this.totals(`user:${userId}:${dayOf(this.now())}`)) };
  }

  /** The part of a user's usage today that their background jobs made. */
  async userJobsToday(userId: string): Promise<UsageTotals> {
    return { ...(await this.totals(`jobs:${userId}:${dayOf(this.now())}`)) };
  }

  /** Everyone's usage today. */
  async totalToday(): Promise<UsageTotals> {
    return { ...(await this.totals(`total:${dayOf(this.now())}`)) };
  }

  /**
   * Writes every changed total; earlier days, and today's oldest written totals
   * beyond the cache size, are dropped from memory (read again when needed).
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const keys = [...this.dirty];
    this.dirty.clear();
    await Promise.all(keys.map((key) => this.write(key)));
    const today = dayOf(this.now());
    let excess = this.cache.size - CACHE_SIZE;
    for (const key of this.cache.keys()) {
      if (this.dirty.has(key) || this.inUse.has(key)) continue;
      if (!key.endsWith(today) || excess > 0) {
        this.cache.delete(key);
        this.stored.delete(key);
        excess -= 1;
      }
    }
  }

  /** Adds this process's part of a total to the stored one (after any write of it in flight). */
  private write(key: string): Promise<void> {
    const previous = this.writing.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.add(key));
    const settled = next.catch(() => undefined);
    this.writing.set(key, settled);
    void settled.then(() => {
      if (this.writing.get(key) === settled) this.writing.delete(key);
    });
    return next;
  }

  /** The total in memory becomes the stored total plus what this process counted. */
  private async add(key: string): Promise<void> {
    const totals = await this.totals(key);
    const sent = { ...totals };
    const delta = combine(sent, this.stored.get(key) ?? zeroUsage(), -1);
    const stored = (await this.days.update(key, (current) => combine(current ?? zeroUsage(), delta, 1)))!;
    // Calls recorded during the write stay on top of the new stored total.
    Object.assign(totals, combine(stored, combine(totals, sent, -1), 1));
    this.stored.set(key, stored);
  }

  private totals(key: string): Promise<UsageTotals> {
    let totals = this.cache.get(key);
    if (!totals) {
      totals = this.days.get(key).then((stored) => {
        this.stored.set(key, stored ?? zeroUsage());
        return { ...(stored ?? zeroUsage()) };
      });
      this.cache.set(key, totals);
    }
    return totals;
  }
}

/** `a + sign * b`, field by field. */
function combine(a: UsageTotals, b: UsageTotals, sign: 1 | -1): UsageTotals {
  return {
    inputTokens: a.inputTokens + sign * b.inputTokens,
    outputTokens: a.outputTokens + sign * b.outputTokens,
    cachedTokens: a.cachedTokens + sign * b.cachedTokens,
    costUsd: a.costUsd + sign * b.costUsd,
    calls: a.calls + sign * b.calls,
  };
}

/** Formats totals for people: `1,234 in / 567 out tokens, $0.0123`. */
export function formatUsage(totals: UsageTotals, options: { priceUnknown?: boolean } = {}): string {
  const cached = totals.cachedTokens ? ` (${totals.cachedTokens.toLocaleString('en-US')} cached)` : '';
  // A model without a price costs 0 in the ledger: say so rather than show $0.0000.
  const cost = options.priceUnknown ? (totals.costUsd > 0 ? `$${totals.costUsd.toFixed(4)} plus calls of unpriced models` : 'price unknown') : `$${totals.costUsd.toFixed(4)}`;
  return `${totals.inputTokens.toLocaleString('en-US')} in${cached} / ${totals.outputTokens.toLocaleString('en-US')} out tokens, ${cost} over ${totals.calls} model call${totals.calls === 1 ? '' : 's'}`;
}
