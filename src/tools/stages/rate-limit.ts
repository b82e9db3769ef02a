/**
 * Per-user, per-tool call limits over sliding windows of a minute and an hour,
 * kept in memory (a restart forgives everyone, which is fine for abuse limits);
 * instances sharing a Redis store count in Redis instead (cluster/rate-limits.ts).
 */
import type { ToolRateLimit } from '../types.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Allowed, or refused with how long to wait. */
export type RateLimitOutcome = { ok: true } | { ok: false; retryAfterMs: number; limit: number; window: 'minute' | 'hour' };

/** Counts calls; see {@link createRateLimiter}. */
export interface RateLimiter {
  /** Records a call for `key` if `limit` allows it. */
  take(key: string, limit: ToolRateLimit): RateLimitOutcome | Promise<RateLimitOutcome>;
}

/** The in-memory limiter, which answers at once. */
export interface MemoryRateLimiter extends RateLimiter {
  take(key: string, limit: ToolRateLimit): RateLimitOutcome;
}

/** Keys tracked before idle ones are swept out. */
const SWEEP_AT_KEYS = 10_000;

/** Creates an in-memory rate limiter. */
export function createRateLimiter(now: () => number = Date.now): MemoryRateLimiter {
  const calls = new Map<string, number[]>();
  return {
    take(key, limit) {
      const at = now();
      if (calls.size >= SWEEP_AT_KEYS) sweep(calls, at);
      const recent = (calls.get(key) ?? []).filter((t) => at - t < HOUR);
      const refusal = check(recent, at, limit.perMinute, MINUTE, 'minute') ?? check(recent, at, limit.perHour, HOUR, 'hour');
      if (refusal) {
        calls.set(key, recent);
        return refusal;
      }
      recent.push(at);
      calls.set(key, recent);
      return { ok: true };
    },
  };
}

/** Forgets keys with no call in the last hour, so memory follows active users only. */
function sweep(calls: Map<string, number[]>, at: number): void {
  for (const [key, times] of calls) if (at - (times.at(-1) ?? 0) >= HOUR) calls.delete(key);
}

function check(recent: number[], at: number, limit: number | undefined, windowMs: number, window: 'minute' | 'hour'): RateLimitOutcome | undefined {
  if (limit === undefined) return undefined;
  const inWindow = recent.filter((t) => at - t < windowMs);
  if (inWindow.length < limit) return undefined;
  const oldest = inWindow[inWindow.length - limit] ?? at;
  return { ok: false, retryAfterMs: Math.max(0, oldest + windowMs - at), limit, window };
}

/** The text the model reads when a call is refused by the limit. */
export function rateLimitMessage(tool: string, outcome: Extract<RateLimitOutcome, { ok: false }>): string {
  const seconds = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
  return `Error: rate limit for "${tool}" reached (${outcome.limit} calls per ${outcome.window}). Try again in ${seconds} s.`;
}
