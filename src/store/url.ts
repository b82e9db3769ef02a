/**
 * Store URLs: which schemes the store speaks, and how a URL is shown in errors
 * and logs (never with its password).
 */

/** URL schemes {@link Store.open} accepts. */
export const STORE_SCHEMES = ['sqlite', 'redis', 'rediss', 'postgres', 'postgresql'] as const;

/** One of {@link STORE_SCHEMES}. */
export type StoreScheme = (typeof STORE_SCHEMES)[number];

/** The scheme of a store URL, or undefined when the store does not support it. */
export function storeSchemeOf(url: string): StoreScheme | undefined {
  const scheme = url.slice(0, Math.max(0, url.indexOf('://')));
  return (STORE_SCHEMES as readonly string[]).includes(scheme) ? (scheme as StoreScheme) : undefined;
}

/**
 * `text` with the password of every URL in it masked:
 * `postgres://user:secret@host/db` becomes `postgres://user:***@host/db`.
 */
export function withoutPassword(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s@/]*@/gi, '$1***@');
}

/** Whether `url` names a Redis store (`redis://`, `rediss://`). */
export function isRedisUrl(url: string | undefined): boolean {
  const scheme = url ? storeSchemeOf(url) : undefined;
  return scheme === 'redis' || scheme === 'rediss';
}
