/**
 * Usage accounting: tokens and cost per user per day and in total per day, and
 * the per-user daily cost ceiling.
 */
import { z } from 'zod';
import { IMAGE_TOKEN_ESTIMATE, type LlmResponse } from '../llm/types.js';
import type { Namespace, Store } from '../store/store.js';
import { UsageTotalsSchema, zeroUsage, type UsageTotals } from './history.js';

/** The UTC day of a time, `YYYY-MM-DD`. */
export function dayOf(time: number): string {
  // Asked on every model call: the last day's name is kept with its bounds.
  if (time >= lastDay.start && time < lastDay.start + DAY_MS) return lastDay.name;
  const name = new Date(time).toISOString().slice(0, 10);
  if (Number.isFinite(time)) lastDay = { start: time - (((time % DAY_MS) + DAY_MS) % DAY_MS), name };
  return name;
}

const DAY_MS = 86_400_000;
let lastDay = { start: Number.NaN, name: '' };

/** Adds one response's usage to totals (in place) and returns them. */
export function addUsage(totals: UsageTotals, response: LlmResponse, images = 0): UsageTotals {
  if (images) totals.images = (totals.images ?? 0) + images;
  totals.inputTokens += response.usage.inputTokens;
  totals.outputTokens += response.usage.outputTokens;
  totals.cachedTokens += response.usage.cachedTokens;
  totals.costUsd += response.costUsd;
  totals.calls += 1;
  return totals;
}

/** Usage of one person on one day, as {@link UsageLedger.usersOn} reads it. */
export interface PersonDayUsage extends UsageTotals {
  /** Qualified user id (`telegram:42`). */
  userId: string;
}

/** The most people {@link UsageLedger.usersOn} reads for one day. */
const MAX_PEOPLE_PER_DAY = 500;

/** Written totals kept in memory beyond this many are read again from the store when needed. */
const CACHE_SIZE = 5_000;

/**
 * How long counted usage waits in memory before it is written (it is also
 * written on close, and before a total is read): calls made meanwhile share
 * one write, and a crash loses at most this long's calls.
 */
const WRITE_DELAY_MS = 1_000;

/**
 * Daily usage per user and in total. Totals live in memory once read; a model
 * call's usage is written in the background within a second (a call waits for
 * no store round trip). A write adds what this process counted since its last
 * write to the stored total (an atomic update) and takes back the sum, so
 * instances sharing a store count together. Reading a total reads the stored
 * one, so the cost ceiling counts other instances' calls once they are written.
 */
export class UsageLedger {
  private readonly days: Namespace<UsageTotals>;
  /** Who made a model call on each day (by day): the per-person totals can be read without listing the store. */
  private readonly people: Namespace<string[]>;
  /** `day\nuserId` already in that day's list, or on its way there. */
  private readonly listed = new Set<string>();
  /** People to add to their day's list at the next write. */
  private readonly unlisted = new Set<string>();
  private readonly cache = new Map<string, Promise<UsageTotals>>();
  /** The totals of `cache` that have been read: a call's usage is added to them at once, with no await. */
  private readonly held = new Map<string, UsageTotals>();
  private readonly dirty = new Set<string>();
  /** Each total as last read from or written to the store: what is beyond it is this process's to add. */
  private readonly stored = new Map<string, UsageTotals>();
  /** The write of each total in flight: two writes of one total would add the same part twice. */
  private readonly writing = new Map<string, Promise<void>>();
  /** A write of each total that has not started yet: it will carry every change made before it starts. */
  private readonly queued = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** The day of the last flush: totals of earlier days leave memory when it changes. */
  private day = '';
  /** Totals being changed right now (between their read and the change), never evicted. */
  private readonly inUse = new Map<string, number>();

  /**
   * @param options.soleWriter no other process writes this store's usage (SQLite and Postgres are
   *   locked to one process): what the store holds is what this ledger last read or wrote, so a
   *   write sets it without reading it first, and a check reads nothing when no call is unwritten.
   */
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly options: { soleWriter?: boolean } = {},
  ) {
    this.days = store.namespace('usage', UsageTotalsSchema, 1);
    this.people = store.namespace('usage-people', z.array(z.string()), 1);
  }

  /** Records one model call for a user (qualified id); a background job's call is also counted apart. */
  async record(userId: string, response: LlmResponse, options: { job?: boolean; images?: number } = {}): Promise<void> {
    const day = dayOf(this.now());
    const keys = [`user:${userId}:${day}`, `total:${day}`, ...(options.job ? [`jobs:${userId}:${day}`] : [])];
    for (const key of keys) {
      const held = this.held.get(key);
      if (held) {
        addUsage(held, response, options.images);
        this.dirty.add(key);
        continue;
      }
      // Kept in memory from the read to the change: an eviction in between would lose it.
      this.inUse.set(key, (this.inUse.get(key) ?? 0) + 1);
      try {
        addUsage(await this.totals(key), response, options.images);
        this.dirty.add(key);
      } finally {
        const left = this.inUse.get(key)! - 1;
        if (left) this.inUse.set(key, left);
        else this.inUse.delete(key);
      }
    }
    const person = `${day}\n${userId}`;
    if (!this.listed.has(person)) {
      this.listed.add(person);
      this.unlisted.add(person);
    }
    this.writeSoon();
  }

  /**
   * A user's usage today as stored now, with what this process counted and has
   * not written yet: the daily cost ceiling reads it, so other instances' calls
   * count against it as soon as they are written.
   */
  userToday(userId: string): Promise<UsageTotals> {
    return this.current(`user:${userId}:${dayOf(this.now())}`);
  }

  /** The part of a user's usage today that their background jobs made. */
  userJobsToday(userId: string): Promise<UsageTotals> {
    return this.current(`jobs:${userId}:${dayOf(this.now())}`);
  }

  /** Everyone's usage today. */
  totalToday(): Promise<UsageTotals> {
    return this.current(`total:${dayOf(this.now())}`);
  }

  /** Everyone's usage on `day` (`YYYY-MM-DD`, as {@link dayOf} names it): the console's chart of the last days. */
  totalOn(day: string): Promise<UsageTotals> {
    return this.current(`total:${day}`);
  }

  /**
   * Each person's usage on `day`, for the console's table: everyone who made a
   * model call that day (on any instance sharing the store), from when the
   * ledger began keeping the day's list of people.
   */
  async usersOn(day: string): Promise<PersonDayUsage[]> {
    // A store that does not answer now: the list as stored is still worth showing.
    await this.writePeople().catch(() => undefined);
    const ids = ((await this.people.get(day)) ?? []).slice(0, MAX_PEOPLE_PER_DAY);
    return Promise.all(ids.map(async (userId) => ({ userId, ...(await this.current(`user:${userId}:${day}`)) })));
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
    await Promise.all([this.writeAll(keys), this.writePeople()]);
    const today = dayOf(this.now());
    let excess = this.cache.size - CACHE_SIZE;
    if (excess <= 0 && today === this.day) return;
    this.day = today;
    for (const person of this.listed) if (!person.startsWith(today)) this.listed.delete(person);
    for (const key of this.cache.keys()) {
      if (this.dirty.has(key) || this.inUse.has(key) || this.writing.has(key)) continue;
      if (!key.endsWith(today) || excess > 0) {
        this.cache.delete(key);
        this.held.delete(key);
        this.stored.delete(key);
        excess -= 1;
      }
    }
  }

  /**
   * Writes the totals of `keys`. As the store's sole writer, every total already
   * read and not being written goes in one store operation; the others (and
   * every total of a shared store) each with its own write.
   */
  private async writeAll(keys: string[]): Promise<void> {
    const batch = this.options.soleWriter ? keys.filter((key) => this.held.has(key) && this.stored.has(key) && !this.writing.has(key)) : [];
    const batched = new Set(batch);
    const others = Promise.all(keys.filter((key) => !batched.has(key)).map((key) => this.write(key)));
    if (batch.length) {
      const sent = batch.map((key) => ({ key, totals: { ...this.held.get(key)! } }));
      const written = this.store.setMany(sent.map(({ key, totals }) => this.days.entry(key, totals))).then(() => {
        // What the store holds now; calls recorded meanwhile stay on top of it in memory.
        for (const { key, totals } of sent) this.stored.set(key, totals);
      });
      // A write of one of these totals meanwhile (a check reading it) waits for this one, so it lands after it.
      const settled = written.catch(() => undefined);
      for (const key of batch) {
        this.writing.set(key, settled);
        void settled.then(() => {
          if (this.writing.get(key) === settled) this.writing.delete(key);
        });
      }
      await written;
    }
    await others;
  }

  /** Adds the people who made their first call of a day (in this process) to that day's list. */
  private async writePeople(): Promise<void> {
    const byDay = new Map<string, string[]>();
    for (const person of this.unlisted) {
      const [day, userId] = person.split('\n') as [string, string];
      byDay.set(day, [...(byDay.get(day) ?? []), userId]);
    }
    this.unlisted.clear();
    await Promise.all(
      [...byDay].map(([day, ids]) =>
        this.people
          .update(day, (current) => [...new Set([...(current ?? []), ...ids])])
          .catch((error: unknown) => {
            // Tried again at the next write.
            for (const userId of ids) this.unlisted.add(`${day}\n${userId}`);
            throw error;
          }),
      ),
    );
  }

  /** A total as stored now plus this process's unwritten part (one write, or one read when there is nothing to add). */
  private async current(key: string): Promise<UsageTotals> {
    // A store that does not answer leaves the total in memory, which is never behind this process's own calls.
    await this.write(key).catch(() => undefined);
    return { ...(await this.totals(key)) };
  }

  private writeSoon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => {
        // Not written: the totals stay ahead of the stored ones, and the next write adds the difference.
      });
    }, WRITE_DELAY_MS).unref();
  }

  /** Adds this process's part of a total to the stored one (after any write of it in flight). */
  private write(key: string): Promise<void> {
    const waiting = this.queued.get(key);
    if (waiting) return waiting;
    const previous = this.writing.get(key) ?? Promise.resolve();
    const next = previous.then(() => {
      this.queued.delete(key);
      return this.add(key);
    });
    this.queued.set(key, next);
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
    const before = this.stored.get(key);
    const delta = combine(sent, before ?? zeroUsage(), -1);
    let stored: UsageTotals;
    if (this.options.soleWriter && before) {
      if (!isZero(delta)) await this.days.set(key, sent);
      stored = sent;
    } else {
      stored = isZero(delta) ? ((await this.days.get(key)) ?? zeroUsage()) : (await this.days.update(key, (current) => combine(current ?? zeroUsage(), delta, 1)))!;
    }
    // Calls recorded during the write stay on top of the new stored total.
    Object.assign(totals, combine(stored, combine(totals, sent, -1), 1));
    this.stored.set(key, stored);
  }

  private totals(key: string): Promise<UsageTotals> {
    let totals = this.cache.get(key);
    if (!totals) {
      const read = this.days.get(key).then((stored) => {
        this.stored.set(key, stored ?? zeroUsage());
        const held = { ...(stored ?? zeroUsage()) };
        if (this.cache.get(key) === read) this.held.set(key, held);
        return held;
      });
      totals = read;
      this.cache.set(key, totals);
    }
    return totals;
  }
}

/** `a + sign * b`, field by field. */
function combine(a: UsageTotals, b: UsageTotals, sign: 1 | -1): UsageTotals {
  const images = (a.images ?? 0) + sign * (b.images ?? 0);
  return {
    ...(images ? { images } : {}),
    inputTokens: a.inputTokens + sign * b.inputTokens,
    outputTokens: a.outputTokens + sign * b.outputTokens,
    cachedTokens: a.cachedTokens + sign * b.cachedTokens,
    costUsd: a.costUsd + sign * b.costUsd,
    calls: a.calls + sign * b.calls,
  };
}

function isZero(totals: UsageTotals): boolean {
  return !totals.inputTokens && !totals.outputTokens && !totals.cachedTokens && !totals.costUsd && !totals.calls && !totals.images;
}

/** Formats totals for people: `1,234 in / 567 out tokens, $0.0123`. */
export function formatUsage(totals: UsageTotals, options: { priceUnknown?: boolean } = {}): string {
  const cached = totals.cachedTokens ? ` (${totals.cachedTokens.toLocaleString('en-US')} cached)` : '';
  // A model without a price costs 0 in the ledger: say so rather than show $0.0000.
  const cost = options.priceUnknown ? (totals.costUsd > 0 ? `$${totals.costUsd.toFixed(4)} plus calls of unpriced models` : 'price unknown') : `$${totals.costUsd.toFixed(4)}`;
  const images = totals.images ? ` (with ${totals.images} image${totals.images === 1 ? '' : 's'}, about ${(totals.images * IMAGE_TOKEN_ESTIMATE).toLocaleString('en-US')} of the tokens in)` : '';
  return `${totals.inputTokens.toLocaleString('en-US')} in${cached} / ${totals.outputTokens.toLocaleString('en-US')} out tokens${images}, ${cost} over ${totals.calls} model call${totals.calls === 1 ? '' : 's'}`;
}
