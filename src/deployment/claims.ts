/** Claims of a single process, kept in its store. */
import { z } from 'zod';
import type { Namespace, Store } from '../store/store.js';
import type { Claims } from './types.js';

/**
 * Claims within one process over the store (SQLite and Postgres run one
 * process per store): one record per routine, its firings' claims with their
 * expiry, pruned at each claim. A record per firing with a store TTL would not
 * do: SQLite drops an expired row only when it is read again, and a firing's
 * claim never is.
 */
export class StoreClaims implements Claims {
  private readonly claims: Namespace<Record<string, number>>;

  constructor(
    store: Store,
    name: string,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.claims = store.namespace(name, z.record(z.string(), z.number()), 1);
  }

  async claim(owner: string, key: string): Promise<boolean> {
    let claimed = false;
    await this.claims.update(owner, (current) => {
      const now = this.now();
      const live = Object.fromEntries(Object.entries(current ?? {}).filter(([, expires]) => expires > now));
      claimed = !Object.hasOwn(live, key);
      if (claimed) live[key] = now + this.ttlMs;
      return live;
    });
    return claimed;
  }

  async expiresAt(owner: string, key: string): Promise<number | undefined> {
    const expires = (await this.claims.get(owner))?.[key];
    return expires !== undefined && expires > this.now() ? expires : undefined;
  }

  async forget(owner: string): Promise<void> {
    await this.claims.delete(owner);
  }

  async close(): Promise<void> {}
}
