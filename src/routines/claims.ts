/**
 * Claims of routine firings: a firing (routine id and scheduled time) is
 * claimed atomically before it runs, so that no restart, retry or second
 * instance runs it twice. A claim only has to outlive the ways back to its
 * firing: a timer that fires late is checked against the routine's next
 * firing, and catch-up after downtime reaches back `routines.catchUpWindow`;
 * so a claim expires after that window and a margin, and the store does not
 * keep one per firing for ever.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { Namespace, Store } from '../store/store.js';
import { isRedisUrl } from '../store/url.js';
import { parseDuration } from './schedule.js';

/** How much longer than the catch-up window a claim is kept. */
export const CLAIM_MARGIN_MS = 3_600_000;
/** The catch-up window when the configured one cannot be read. */
const DEFAULT_CATCH_UP_MS = 3_600_000;

/** The id of one firing: the same on every instance and after every restart. */
export function firingId(routineId: string, at: number): string {
  return `${routineId}_${at}`;
}

/** `routines.catchUpWindow` in milliseconds. */
export function catchUpWindowMs(config: Config['routines']): number {
  return parseDuration(config.catchUpWindow) ?? DEFAULT_CATCH_UP_MS;
}

/** How long a claim is kept: the catch-up window and a margin. */
export function claimTtlMs(config: Config['routines']): number {
  return catchUpWindowMs(config) + CLAIM_MARGIN_MS;
}

/** Claims a firing once, atomically, among every process that shares the store. */
export interface FiringClaims {
  /** True for the one caller that claimed `firing` of `routineId` first; false for everyone after, until the claim expires. */
  claim(routineId: string, firing: string): Promise<boolean>;
  /** When the claim of `firing` expires (ms), or undefined when there is none. */
  expiresAt(routineId: string, firing: string): Promise<number | undefined>;
  /** Drops the claims of a deleted routine. */
  forget(routineId: string): Promise<void>;
  close(): Promise<void>;
}

/** The claims the store of `config` needs: in Redis for instances that share it, else in the store. */
export function firingClaimsFor(config: Config, store: Store): FiringClaims {
  const ttlMs = claimTtlMs(config.routines);
  return isRedisUrl(config.storeUrl) ? new RedisClaims(config.storeUrl!, ttlMs) : new StoreClaims(store, ttlMs);
}

/**
 * Claims within one process over the store (SQLite and Postgres run one
 * process per store): one record per routine, its firings' claims with their
 * expiry, pruned at each claim. A record per firing with a store TTL would not
 * do: SQLite drops an expired row only when it is read again, and a firing's
 * claim never is.
 */
export class StoreClaims implements FiringClaims {
  private readonly claims: Namespace<Record<string, number>>;

  constructor(
    store: Store,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.claims = store.namespace('routine-claims', z.record(z.string(), z.number()), 1);
  }

  async claim(routineId: string, firing: string): Promise<boolean> {
    let claimed = false;
    await this.claims.update(routineId, (current) => {
      const now = this.now();
      const live = Object.fromEntries(Object.entries(current ?? {}).filter(([, expires]) => expires > now));
      claimed = !Object.hasOwn(live, firing);
      if (claimed) live[firing] = now + this.ttlMs;
      return live;
    });
    return claimed;
  }

  async expiresAt(routineId: string, firing: string): Promise<number | undefined> {
    const expires = (await this.claims.get(routineId))?.[firing];
    return expires !== undefined && expires > this.now() ? expires : undefined;
  }

  async forget(routineId: string): Promise<void> {
    await this.claims.delete(routineId);
  }

  async close(): Promise<void> {}
}

/** Claims with Redis `SET NX PX`, atomic across every instance on the Redis store; Redis drops them when they expire. */
export class RedisClaims implements FiringClaims {
  private client: Redis | undefined;

  constructor(
    private readonly url: string,
    private readonly ttlMs: number,
  ) {}

  async claim(_routineId: string, firing: string): Promise<boolean> {
    const client = await this.connect();
    return (await client.set(keyOf(firing), String(Date.now()), 'PX', this.ttlMs, 'NX')) === 'OK';
  }

  async expiresAt(_routineId: string, firing: string): Promise<number | undefined> {
    const left = await (await this.connect()).pttl(keyOf(firing));
    return left > 0 ? Date.now() + left : undefined;
  }

  async forget(): Promise<void> {}

  async close(): Promise<void> {
    this.client?.disconnect();
  }

  private async connect(): Promise<Redis> {
    if (!this.client) {
      const { Redis } = await import('ioredis');
      this.client = new Redis(this.url, { maxRetriesPerRequest: 3 });
    }
    return this.client;
  }
}

function keyOf(firing: string): string {
  return `pincer:routine-firing:${firing}`;
}
