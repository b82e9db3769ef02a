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

/** Daily usage per user and in total. */
export class UsageLedger {
  private readonly days: Namespace<UsageTotals>;

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.days = store.namespace('usage', UsageTotalsSchema, 1);
  }

  /** Records one model call for a user (qualified id). */
  async record(userId: string, response: LlmResponse): Promise<void> {
    const day = dayOf(this.now());
    await Promise.all([
      this.days.update(`user:${userId}:${day}`, (current) => addUsage(current ?? zeroUsage(), response)),
      this.days.update(`total:${day}`, (current) => addUsage(current ?? zeroUsage(), response)),
    ]);
  }

  /** A user's usage today. */
  async userToday(userId: string): Promise<UsageTotals> {
    return (await this.days.get(`user:${userId}:${dayOf(this.now())}`)) ?? zeroUsage();
  }

  /** Everyone's usage today. */
  async totalToday(): Promise<UsageTotals> {
    return (await this.days.get(`total:${dayOf(this.now())}`)) ?? zeroUsage();
  }
}

/** Formats totals for people: `1,234 in / 567 out tokens, $0.0123`. */
export function formatUsage(totals: UsageTotals): string {
  const cached = totals.cachedTokens ? ` (${totals.cachedTokens.toLocaleString('en-US')} cached)` : '';
  return `${totals.inputTokens.toLocaleString('en-US')} in${cached} / ${totals.outputTokens.toLocaleString('en-US')} out tokens, $${totals.costUsd.toFixed(4)} over ${totals.calls} model call${totals.calls === 1 ? '' : 's'}`;
}
