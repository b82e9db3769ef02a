import { describe, expect, it } from 'vitest';
import { CallWindowDetector } from '../../../src/engine/guards/call-window.js';
import { seeCall } from '../../../src/engine/guards/observed-call.js';

const fetch = seeCall({ name: 'http_fetch', arguments: '{"url":"https://example.com/a"}', ok: true });
const other = (i: number) => seeCall({ name: 'calculator', arguments: JSON.stringify({ expression: `${i} + 1` }), ok: true });
const others = (n: number, from: number) => Array.from({ length: n }, (_, i) => other(from + i));

/** Findings at each call, '-' for none. */
function findings(calls: ReturnType<typeof seeCall>[], size = 10, repeats = 3): string[] {
  const detector = new CallWindowDetector(size, repeats);
  return calls.map((call) => detector.see(call)?.summary ?? '-');
}

describe('the same call within a window', () => {
  it('finds the same call 3 times among the last 10, with other calls in between', () => {
    // The 1st, 6th and 10th calls: all three inside the last 10.
    const result = findings([fetch, ...others(4, 0), fetch, ...others(3, 10), fetch]);
    expect(result.slice(0, -1).every((f) => f === '-')).toBe(true);
    expect(result.at(-1)).toBe('http_fetch with url "https://example.com/a", 3 times within the last 10 calls.');
  });

  it('does not count a repeat that has left the window', () => {
    // The 1st, 6th and 11th calls: the first has left the last 10.
    expect(findings([fetch, ...others(4, 0), fetch, ...others(4, 10), fetch]).every((f) => f === '-')).toBe(true);
  });

  it('needs the configured number of repeats: 2 are not enough for 3', () => {
    expect(findings([fetch, other(1), fetch]).every((f) => f === '-')).toBe(true);
    expect(findings([fetch, other(1), fetch], 10, 2).at(-1)).toContain('2 times within the last 3 calls');
  });

  it('counts calls with the same arguments in another key order as the same call', () => {
    const a = seeCall({ name: 'search', arguments: '{"q":"pincer","limit":5}', ok: true });
    const b = seeCall({ name: 'search', arguments: '{"limit":5,"q":"pincer"}', ok: true });
    expect(findings([a, other(1), b, other(2), a]).at(-1)).toContain('3 times');
  });

  it('forgets the window on reset', () => {
    const detector = new CallWindowDetector(10, 3);
    detector.see(fetch);
    detector.see(fetch);
    detector.reset();
    expect(detector.see(fetch)).toBeUndefined();
    expect(detector.see(fetch)).toBeUndefined();
    // The window starts empty: the finding counts only the calls since.
    expect(detector.see(fetch)?.summary).toBe('http_fetch with url "https://example.com/a", 3 times within the last 3 calls.');
  });
});
