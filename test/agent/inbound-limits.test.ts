import { describe, expect, it } from 'vitest';
import { InboundLimiter } from '../../src/engine/inbound-limits.js';

describe('InboundLimiter', () => {
  it('refuses the message over the per-minute rate and lets it through once the window has passed', () => {
    let now = 0;
    const limiter = new InboundLimiter(2, 1000, () => now);
    expect(limiter.check('a', 'x')).toBeUndefined();
    expect(limiter.check('a', 'x')).toBeUndefined();
    expect(limiter.check('a', 'x')?.refusal.text).toMatch(/faster than 2 a minute/);
    now += 60_000;
    expect(limiter.check('a', 'x')).toBeUndefined();
  });

  it('says to tell the sender once a window, however many are refused, and an oversized message counts', () => {
    let now = 0;
    const limiter = new InboundLimiter(2, 100, () => now);
    expect(limiter.check('a', 'x'.repeat(500))?.refusal.text).toMatch(/500 characters long/);
    expect(limiter.take('a')).toBeUndefined();
    const notices = () => Array.from({ length: 10 }, () => limiter.take('a')).filter((refused) => refused?.notify).length;
    expect(notices()).toBe(1);
    now += 30_000;
    expect(notices()).toBe(0);
    now += 30_000;
    // A new window: two are taken, then one notice again.
    expect(limiter.take('a')).toBeUndefined();
    expect(limiter.take('a')).toBeUndefined();
    expect(notices()).toBe(1);
  });

  it('keeps only the last minute of users in memory', () => {
    let now = 0;
    const limiter = new InboundLimiter(30, 1000, () => now);
    for (let i = 0; i < 10_000; i++) limiter.check(`user${i}`, 'hi');
    expect(limiter.trackedUsers).toBe(10_000);
    now += 61_000;
    limiter.check('late', 'hi');
    expect(limiter.trackedUsers).toBe(1);
  });
});
