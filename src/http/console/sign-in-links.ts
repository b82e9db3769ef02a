/**
 * One-time sign-in links to the console (SPEC section 18): `/console` in a DM
 * or `pincer console-link` at the machine makes one, valid ten minutes and for
 * one use. Only a hash of each token is stored, so that the store (possibly a
 * Redis shared by several instances) never holds a usable link, and a link is
 * redeemed by one atomic update that deletes it: two clicks, on two
 * instances, sign in once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Namespace, Store } from '../../store/store.js';

/** How long a link stays valid. */
export const LINK_TTL_MS = 10 * 60_000;

const LinkSchema = z.object({ userId: z.string(), name: z.string(), expiresAt: z.number() });
/** Who a link signs in. */
export type LinkHolder = Pick<z.infer<typeof LinkSchema>, 'userId' | 'name'>;

/** What redeeming a token gave: the person, or why not. */
export type Redeemed = { ok: true; holder: LinkHolder } | { ok: false; reason: 'used' | 'expired' | 'unknown' };

/** The store key of a token: its SHA-256, never the token itself. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Makes and redeems sign-in links. */
export class SignInLinks {
  private readonly links: Namespace<z.infer<typeof LinkSchema>>;
  /** Marks of used links, kept as long as a link lives, so that a second click is told why. */
  private readonly used: Namespace<number>;

  constructor(
    store: Store,
    private readonly now: () => number = Date.now,
  ) {
    this.links = store.namespace('console-links', LinkSchema);
    this.used = store.namespace('console-links-used', z.number());
  }

  /** A new token for `holder` (32 random bytes, base64url). */
  async issue(holder: LinkHolder): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.links.set(tokenKey(token), { ...holder, expiresAt: this.now() + LINK_TTL_MS }, LINK_TTL_MS);
    return token;
  }

  /** Uses a token: the first call for a valid token gets its holder; every later one is refused. */
  async redeem(token: string): Promise<Redeemed> {
    if (!/^[\w-]{20,100}$/.test(token)) return { ok: false, reason: 'unknown' };
    const key = tokenKey(token);
    let found: z.infer<typeof LinkSchema> | undefined;
    // Deleted in the same atomic update that reads it: on Redis the change may run again, and only its last run counts.
    await this.links.update(key, (current) => {
      found = current;
      return undefined;
    });
    if (!found) return { ok: false, reason: (await this.used.get(key)) ? 'used' : 'unknown' };
    await this.used.set(key, this.now(), LINK_TTL_MS);
    if (found.expiresAt <= this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, holder: { userId: found.userId, name: found.name } };
  }
}
