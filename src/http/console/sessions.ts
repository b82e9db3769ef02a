/**
 * Console sessions: made when a sign-in link is redeemed, kept server-side in
 * the store (every instance on a shared store knows them) under a hash of
 * their id, and named to the browser by an HttpOnly, SameSite=Strict cookie
 * that expires with them. Each carries the CSRF token every change must send
 * back, and what the person may see (their {@link Viewer}).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Namespace, Store } from '../../store/store.js';
import { ViewerSchema, type Viewer } from './viewer.js';

/** How long a session lasts from sign-in. */
export const SESSION_TTL_MS = 8 * 60 * 60_000;
/** The session cookie's name. */
export const SESSION_COOKIE = 'pincer_console';

const SessionSchema = z.object({ viewer: ViewerSchema, csrf: z.string(), expiresAt: z.number() });
/** A signed-in session. */
export type Session = z.infer<typeof SessionSchema>;

const hashOf = (id: string) => createHash('sha256').update(id).digest('base64url');

/** Makes, finds and ends sessions. */
export class Sessions {
  private readonly sessions: Namespace<Session>;

  constructor(
    store: Store,
    private readonly now: () => number = Date.now,
  ) {
    this.sessions = store.namespace('console-sessions', SessionSchema);
  }

  /** A new session for `viewer`; the id goes into the cookie and nowhere else. */
  async create(viewer: Viewer): Promise<{ id: string; session: Session }> {
    const id = randomBytes(32).toString('base64url');
    const session: Session = { viewer, csrf: randomBytes(24).toString('base64url'), expiresAt: this.now() + SESSION_TTL_MS };
    await this.sessions.set(hashOf(id), session, SESSION_TTL_MS);
    return { id, session };
  }

  /** The live session named by `id`, if any. */
  async find(id: string | undefined): Promise<Session | undefined> {
    if (!id || !/^[\w-]{20,100}$/.test(id)) return undefined;
    const session = await this.sessions.get(hashOf(id));
    return session && session.expiresAt > this.now() ? session : undefined;
  }

  /** Ends a session (sign-out). */
  async end(id: string | undefined): Promise<void> {
    if (id && /^[\w-]{20,100}$/.test(id)) await this.sessions.delete(hashOf(id));
  }
}

/** Whether `sent` is the session's CSRF token (compared in constant time). */
export function csrfMatches(session: Session, sent: string | undefined): boolean {
  if (!sent) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The cookie value of `name` in a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** The Set-Cookie header of a session (an empty id and no age: the cookie is removed). */
export function sessionCookie(id: string, maxAgeMs: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure ? '; Secure' : ''}`;
}
