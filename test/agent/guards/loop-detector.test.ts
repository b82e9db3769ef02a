import { describe, expect, it } from 'vitest';
import { argumentAgreement, argumentsOf } from '../../../src/agent/guards/call-similarity.js';
import { LoopDetector, type ObservedCall } from '../../../src/agent/guards/loop-detector.js';
import { DEFAULT_LOOP_GUARDS } from '../../../src/config/schema.js';

const call = (name: string, args: Record<string, unknown> = {}, ok = true, error?: string): ObservedCall => ({
  name,
  arguments: JSON.stringify(args),
  ok,
  ...(error ? { error } : {}),
});

/** Feeds calls one batch each; returns the verdict actions. */
function run(detector: LoopDetector, calls: ObservedCall[]): string[] {
  return calls.map((c) => detector.observe([c]).action);
}

describe('similar calls', () => {
  it('agree on 4 of 5 keys (80%) but not on 3 of 5', () => {
    const base = { a: 1, b: 2, c: 3, d: 4, e: 5 };
    expect(argumentAgreement(base, { ...base, e: 6 })).toBe(0.8);
    expect(argumentAgreement(base, { ...base, d: 0, e: 6 })).toBe(0.6);
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(detector, [call('t', base), call('t', { ...base, e: 6 }), call('t', { ...base, e: 7 })])).toEqual(['none', 'note', 'note']);
    const other = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(other, [call('t', base), call('t', { ...base, d: 0, e: 6 }), call('t', { ...base, d: 9, e: 7 })])).toEqual(['none', 'none', 'none']);
  });

  it('compares values trimmed, paths normalised and keys in any order', () => {
    expect(argumentAgreement(argumentsOf('{"path":"./notes/a.txt"}'), argumentsOf('{"path":"notes/a.txt "}'))).toBe(1);
    expect(argumentAgreement(argumentsOf('{"path":"dir/../a.txt","n":1}'), argumentsOf('{"n":1,"path":"a.txt"}'))).toBe(1);
    expect(argumentAgreement(argumentsOf('{"path":"docs/"}'), argumentsOf('{"path":"docs"}'))).toBe(1);
    expect(argumentAgreement(argumentsOf('{"path":"a.txt"}'), argumentsOf('{"path":"b.txt"}'))).toBe(0);
  });

  it('notes one before the limit (3), then escalates a loop that goes on after the note', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    const read = call('files_read', { path: 'notes.txt' });
    expect(detector.observe([read])).toEqual({ action: 'none' });
    const second = detector.observe([read]);
    expect(second).toMatchObject({ action: 'note', finding: { detector: 'similar', level: 'warn' } });
    const third = detector.observe([read]);
    expect(third).toMatchObject({ action: 'note', finding: { detector: 'similar', level: 'limit' } });
    if (third.action === 'note') {
      expect(third.finding.summary).toContain('files_read with path "notes.txt", 3 times');
      expect(third.message).toContain('going in circles');
    }
    expect(detector.observe([read])).toMatchObject({ action: 'escalate', finding: { detector: 'similar' } });
  });

  it('honours a configured limit', () => {
    const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, similarCallLimit: 5, windowRepeats: 10 });
    const read = call('files_read', { path: 'a.md' });
    expect(run(detector, [read, read, read, read, read, read])).toEqual(['none', 'none', 'none', 'note', 'note', 'escalate']);
  });

  it('a different tool in between breaks the run', () => {
    const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, windowRepeats: 10 });
    const read = call('files_read', { path: 'a.md' });
    expect(run(detector, [read, call('time'), read, call('calculator', { expression: '1+1' }), read])).toEqual(['none', 'none', 'none', 'none', 'none']);
  });
});

describe('windows', () => {
  const config = { ...DEFAULT_LOOP_GUARDS, maxCycleLength: 2 };
  const a = call('http_fetch', { url: 'https://example.com/a' });
  const fillers = (n: number, from = 0) => Array.from({ length: n }, (_, i) => call('calculator', { expression: `${from + i} + 1` }));

  it('finds the same call 3 times among the last 10', () => {
    const detector = new LoopDetector(config);
    const verdicts = run(detector, [a, ...fillers(3), a, ...fillers(3, 10), a]);
    expect(verdicts.slice(0, -1).every((v) => v === 'none')).toBe(true);
    expect(verdicts.at(-1)).toBe('note');
  });

  it('does not count repeats spread over more than 10 calls', () => {
    const detector = new LoopDetector(config);
    expect(run(detector, [a, ...fillers(5), a, ...fillers(5, 10), a]).every((v) => v === 'none')).toBe(true);
  });
});

describe('cycles', () => {
  const calls = ['A', 'B', 'C', 'D', 'E', 'F'].map((name) => call(`tool_${name}`, { x: name }));
  for (let k = 2; k <= 5; k++) {
    it(`finds a cycle of ${k} calls once it has come round twice`, () => {
      const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, windowRepeats: 100 });
      const cycle = calls.slice(0, k);
      const verdicts = run(detector, [...cycle, ...cycle]);
      expect(verdicts.slice(0, -1).every((v) => v === 'none')).toBe(true);
      const last = detector.observe([cycle[0]!]);
      expect(verdicts.at(-1)).toBe('note');
      expect(last).toMatchObject({ action: 'escalate', finding: { detector: 'cycle' } });
    });
  }

  it('does not look for cycles longer than 5', () => {
    const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, windowRepeats: 100 });
    expect(run(detector, [...calls, ...calls]).every((v) => v === 'none')).toBe(true);
  });

  it('names the calls of the cycle', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    const verdict = [calls[0]!, calls[1]!, calls[0]!, calls[1]!].map((c) => detector.observe([c])).at(-1)!;
    expect(verdict.action === 'note' && verdict.finding.summary).toContain('tool_A → tool_B');
  });
});

describe('consecutive failures', () => {
  const failing = (i: number) => call('http_fetch', { url: `https://example.com/${i}` }, false, 'Error: timeout after 15 s');

  it('4 in a row are fine, the 5th is a loop, and a success resets the count', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(detector, [1, 2, 3, 4].map(failing))).toEqual(['none', 'none', 'none', 'none']);
    const fifth = detector.observe([failing(5)]);
    expect(fifth).toMatchObject({ action: 'note', finding: { detector: 'failures' } });
    expect(fifth.action === 'note' && fifth.finding.summary).toContain('5 failing tool calls in a row (last: http_fetch: Error: timeout after 15 s)');

    const other = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(other, [failing(1), failing(2), failing(3), failing(4), call('time'), failing(5), failing(6)]).every((v) => v === 'none')).toBe(true);
  });

  it('counts the calls of one batch', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(detector.observe([1, 2, 3, 4, 5].map(failing))).toMatchObject({ action: 'note', finding: { detector: 'failures' } });
  });
});

describe('reset', () => {
  it('forgets the calls and the notes given', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    const read = call('files_read', { path: 'a.md' });
    expect(run(detector, [read, read, read, read])).toEqual(['none', 'note', 'note', 'escalate']);
    detector.reset();
    expect(run(detector, [read, read, read, read])).toEqual(['none', 'note', 'note', 'escalate']);
  });
});
