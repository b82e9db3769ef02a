import { describe, expect, it } from 'vitest';
import { FailureStreakDetector } from '../../../src/engine/guards/failure-streak.js';
import { seeCall } from '../../../src/engine/guards/observed-call.js';

const failing = (i: number, error?: string) =>
  seeCall({ name: 'http_fetch', arguments: JSON.stringify({ url: `https://example.com/${i}` }), ok: false, ...(error ? { error } : {}) });
const succeeding = seeCall({ name: 'time', arguments: '{}', ok: true });

describe('failures in a row', () => {
  it('lets 4 failing calls pass and finds the 5th, whatever the calls are', () => {
    const detector = new FailureStreakDetector(5);
    expect([1, 2, 3, 4].map((i) => detector.see(failing(i)))).toEqual([undefined, undefined, undefined, undefined]);
    expect(detector.see(failing(5, 'Error: timeout after 15 s'))).toEqual({
      detector: 'failures',
      level: 'limit',
      summary: '5 failing tool calls in a row (last: http_fetch: Error: timeout after 15 s).',
    });
  });

  it('starts counting again after a call that succeeds', () => {
    const detector = new FailureStreakDetector(5);
    const calls = [failing(1), failing(2), failing(3), failing(4), succeeding, failing(5), failing(6), failing(7), failing(8)];
    expect(calls.map((call) => detector.see(call)).every((f) => f === undefined)).toBe(true);
    expect(detector.see(failing(9))?.summary).toBe('5 failing tool calls in a row (last: http_fetch).');
  });

  it('clips a long error to one short line', () => {
    const detector = new FailureStreakDetector(2);
    detector.see(failing(1));
    const summary = detector.see(failing(2, `Error:\n${'x'.repeat(300)}`))!.summary;
    expect(summary).not.toContain('\n');
    expect(summary.length).toBeLessThan(140);
    expect(summary).toContain('…');
  });

  it('forgets the streak on reset', () => {
    const detector = new FailureStreakDetector(2);
    detector.see(failing(1));
    detector.reset();
    expect(detector.see(failing(2))).toBeUndefined();
  });
});
