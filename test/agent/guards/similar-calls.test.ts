import { describe, expect, it } from 'vitest';
import { seeCall } from '../../../src/engine/guards/observed-call.js';
import { SimilarCallsDetector } from '../../../src/engine/guards/similar-calls.js';

const seen = (name: string, args: unknown) => seeCall({ name, arguments: typeof args === 'string' ? args : JSON.stringify(args), ok: true });

/** The level found at each call, or '-' for nothing. */
function levels(detector: SimilarCallsDetector, calls: ReturnType<typeof seen>[]): string[] {
  return calls.map((call) => detector.see(call)?.level ?? '-');
}

describe('similar calls', () => {
  it('warns at the 2nd similar call and finds the loop at the 3rd (limit 3)', () => {
    const read = seen('files_read', { path: 'notes.txt' });
    expect(levels(new SimilarCallsDetector(0.8, 3), [read, read, read, read])).toEqual(['-', 'warn', 'limit', 'limit']);
  });

  it('follows a configured limit: nothing below it, the warning one before', () => {
    const read = seen('files_read', { path: 'notes.txt' });
    expect(levels(new SimilarCallsDetector(0.8, 5), [read, read, read, read, read])).toEqual(['-', '-', '-', 'warn', 'limit']);
  });

  it('does not warn at the first call when the limit is 2', () => {
    const read = seen('files_read', { path: 'notes.txt' });
    expect(levels(new SimilarCallsDetector(0.8, 2), [read, read])).toEqual(['-', 'limit']);
  });

  it('counts 4 of 5 equal keys (80%) as similar, not 3 of 5', () => {
    const base = { a: 1, b: 2, c: 3, d: 4, e: 5 };
    const close = [seen('t', base), seen('t', { ...base, e: 6 }), seen('t', { ...base, e: 7 })];
    expect(levels(new SimilarCallsDetector(0.8, 3), close)).toEqual(['-', 'warn', 'limit']);
    const far = [seen('t', base), seen('t', { ...base, d: 0, e: 6 }), seen('t', { ...base, d: 9, e: 7 })];
    expect(levels(new SimilarCallsDetector(0.8, 3), far)).toEqual(['-', '-', '-']);
  });

  it('compares on the union of both calls\' keys: a key only one call has is a difference', () => {
    const calls = [seen('t', { a: 1, b: 2 }), seen('t', { a: 1, b: 2, c: 3 }), seen('t', { a: 1, b: 2, c: 3, d: 4 })];
    expect(levels(new SimilarCallsDetector(0.8, 3), calls)).toEqual(['-', '-', '-']);
  });

  it('treats trimmed values, equivalent relative paths, key order and nested key order as the same', () => {
    const calls = [
      seen('files_read', '{"path":"notes/a.txt","options":{"from":1,"to":9}}'),
      seen('files_read', '{"options":{"to":9,"from":1},"path":"./notes/a.txt"}'),
      seen('files_read', '{"path":" notes/x/../a.txt ","options":{"from":1,"to":9}}'),
    ];
    expect(levels(new SimilarCallsDetector(1, 3), calls)).toEqual(['-', 'warn', 'limit']);
    const folders = [seen('files_list', { path: 'docs' }), seen('files_list', { path: 'docs/' }), seen('files_list', { path: './docs' })];
    expect(levels(new SimilarCallsDetector(1, 3), folders)).toEqual(['-', 'warn', 'limit']);
  });

  it('does not mix up different files, different tools, or a run broken by another call', () => {
    const detector = new SimilarCallsDetector(0.8, 3);
    expect(levels(detector, [seen('files_read', { path: 'a.txt' }), seen('files_read', { path: 'b.txt' }), seen('files_read', { path: 'a.txt' })])).toEqual(['-', '-', '-']);
    const read = seen('files_read', { path: 'a.txt' });
    expect(levels(new SimilarCallsDetector(0.8, 3), [read, seen('files_list', { path: 'a.txt' }), read, seen('time', {}), read])).toEqual(['-', '-', '-', '-', '-']);
  });

  it('says which call repeats', () => {
    const detector = new SimilarCallsDetector(0.8, 3);
    const read = seen('files_read', { path: 'notes.txt' });
    detector.see(read);
    detector.see(read);
    expect(detector.see(read)?.summary).toBe('files_read with path "notes.txt", 3 times in a row with the same or nearly the same arguments.');
  });

  it('starts over after a reset', () => {
    const detector = new SimilarCallsDetector(0.8, 3);
    const read = seen('files_read', { path: 'a.txt' });
    expect(levels(detector, [read, read])).toEqual(['-', 'warn']);
    detector.reset();
    expect(levels(detector, [read, read, read])).toEqual(['-', 'warn', 'limit']);
  });
});
