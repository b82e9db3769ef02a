import { describe, expect, it } from 'vitest';
import { createRateLimiter, rateLimitMessage } from '../../../src/tools/stages/rate-limit.js';

describe('rate limiter', () => {
  it('applies the hourly limit over a sliding hour', () => {
    let now = 0;
    const limiter = createRateLimiter(() => now);
    const limit = { perMinute: 10, perHour: 3 };
    for (let i = 0; i < 3; i++) {
      expect(limiter.take('u:t', limit)).toEqual({ ok: true });
      now += 20 * 60_000;
    }
    // Three calls at 0, 20 and 40 minutes; at 60 minutes the first one has just left the window.
    expect(limiter.take('u:t', limit)).toEqual({ ok: true });
    now += 60_000;
    const refused = limiter.take('u:t', limit);
    expect(refused).toEqual({ ok: false, retryAfterMs: 19 * 60_000, limit: 3, window: 'hour' });
    if (!refused.ok) expect(rateLimitMessage('t', refused)).toBe('Error: rate limit for "t" reached (3 calls per hour). Try again in 1140 s.');
  });

  it('does not count refused calls', () => {
    let now = 0;
    const limiter = createRateLimiter(() => now);
    expect(limiter.take('k', { perMinute: 1 }).ok).toBe(true);
    for (let i = 0; i < 5; i++) expect(limiter.take('k', { perMinute: 1 }).ok).toBe(false);
    now = 60_000;
    expect(limiter.take('k', { perMinute: 1 }).ok).toBe(true);
  });
});
