import { describe, expect, it } from 'vitest';
import { LoopDetector, type ObservedCall } from '../../../src/engine/guards/loop-detector.js';
import { DEFAULT_LOOP_GUARDS } from '../../../src/config/schema.js';

const call = (name: string, args: Record<string, unknown> = {}, ok = true, error?: string): ObservedCall => ({
  name,
  arguments: JSON.stringify(args),
  ok,
  ...(error ? { error } : {}),
});
const read = call('files_read', { path: 'notes.txt' });
const failing = (i: number) => call('http_fetch', { url: `https://example.com/${i}` }, false, 'timeout');

/** Feeds calls one batch each; returns the verdict actions. */
function run(detector: LoopDetector, calls: ObservedCall[]): string[] {
  return calls.map((c) => detector.observe([c]).action);
}

describe('the loop detector', () => {
  it('notes a similar call one before the limit, notes the loop, then escalates if it goes on', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(detector.observe([read])).toEqual({ action: 'none' });
    expect(detector.observe([read])).toMatchObject({ action: 'note', finding: { detector: 'similar', level: 'warn' } });
    const third = detector.observe([read]);
    expect(third).toMatchObject({ action: 'note', finding: { detector: 'similar', level: 'limit' } });
    expect(third.action === 'note' && third.message).toBe(
      'You are going in circles: files_read with path "notes.txt", 3 times in a row with the same or nearly the same arguments. ' +
        'Repeating it will not give a different result. Use what you already have, change your approach, or tell the user what is blocking you.',
    );
    expect(detector.observe([read])).toMatchObject({ action: 'escalate', finding: { detector: 'similar' } });
  });

  it('escalates a loop of another kind after the note', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(detector, [read, read, read])).toEqual(['none', 'note', 'note']);
    expect(run(detector, [1, 2, 3, 4].map(failing))).toEqual(['none', 'none', 'none', 'none']);
    expect(detector.observe([failing(5)])).toMatchObject({ action: 'escalate', finding: { detector: 'failures' } });
  });

  it('notes the first loop found by each kind of detector', () => {
    const first = (calls: ObservedCall[]) => {
      const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, similarCallLimit: 50 });
      return calls.map((c) => detector.observe([c])).find((verdict) => verdict.action !== 'none');
    };
    const [a, b] = [call('files_list', { path: '.' }), call('files_read', { path: 'a.txt' })];
    expect(first([a, b, a, b])).toMatchObject({ action: 'note', finding: { detector: 'cycle', summary: 'the cycle files_list → files_read, twice in a row.' } });
    expect(first([a, call('time'), a, call('calculator', { expression: '1+1' }), a])).toMatchObject({ action: 'note', finding: { detector: 'window' } });
    expect(first([1, 2, 3, 4, 5].map(failing))).toMatchObject({
      action: 'note',
      finding: { detector: 'failures', summary: '5 failing tool calls in a row (last: http_fetch: timeout).' },
    });
  });

  it('warns again for a new run of similar calls, but not once the loop note was given', () => {
    const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, windowRepeats: 50 });
    const other = call('files_read', { path: 'other.txt' });
    expect(run(detector, [read, read, call('time'), other, other])).toEqual(['none', 'note', 'none', 'none', 'note']);
    expect(run(detector, [other, read, read])).toEqual(['note', 'none', 'none']);
  });

  it('counts the calls of one batch in order, and answers once for the batch', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(detector.observe([1, 2, 3, 4, 5].map(failing))).toMatchObject({ action: 'note', finding: { detector: 'failures' } });
    expect(new LoopDetector(DEFAULT_LOOP_GUARDS).observe([read, read, read])).toMatchObject({ action: 'note', finding: { level: 'limit' } });
  });

  it('tells the model it is starting to repeat itself at the warning, in plain words', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    detector.observe([read]);
    const warned = detector.observe([read]);
    expect(warned.action === 'note' && warned.message).toBe(
      'You are starting to repeat yourself: files_read with path "notes.txt", 2 times in a row with the same or nearly the same arguments. ' +
        'Repeating it will not give a different result. Use what you already have, change your approach, or tell the user what is blocking you.',
    );
  });

  it('in one batch, a loop outranks a later warning: the model hears about the loop', () => {
    const detector = new LoopDetector({ ...DEFAULT_LOOP_GUARDS, windowRepeats: 50 });
    const other = call('files_read', { path: 'other.txt' });
    const verdict = detector.observe([read, read, read, other, other]);
    expect(verdict).toMatchObject({ action: 'note', finding: { detector: 'similar', level: 'limit' } });
    expect(verdict.action === 'note' && verdict.message).toMatch(/^You are going in circles: files_read with path "notes\.txt", 3 times/);
    // The loop note was given, so the next loop escalates.
    expect(detector.observe([other])).toMatchObject({ action: 'escalate' });
  });

  it('on one call, a cycle or a repeated call outranks a warning of similar calls: the model hears about the loop', () => {
    // files_read of x then y agree on 4 of 5 keys: similar, a warning at the second in a row.
    const shared = { encoding: 'utf8', from: 1, to: 9, follow: false };
    const [a, b, c] = [call('time'), call('files_read', { path: 'x.txt', ...shared }), call('files_read', { path: 'y.txt', ...shared })];
    const cycle = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(cycle, [a, b, c, a, b])).toEqual(['none', 'none', 'note', 'none', 'none']);
    const found = cycle.observe([c]);
    expect(found).toMatchObject({ action: 'note', finding: { detector: 'cycle', level: 'limit' } });
    expect(found.action === 'note' && found.message).toMatch(/^You are going in circles: the cycle time → files_read with path "x\.txt" → files_read with path "y\.txt", twice in a row\./);

    const window = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(window, [b, a, b])).toEqual(['none', 'none', 'none']);
    const repeated = window.observe([b]);
    expect(repeated).toMatchObject({ action: 'note', finding: { detector: 'window', level: 'limit' } });
    expect(repeated.action === 'note' && repeated.message).toMatch(/^You are going in circles: files_read with path "x\.txt", encoding "utf8", 3 times within the last 4 calls\./);
  });

  it('starts again from a note after a reset (Continue, Try another way)', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    expect(run(detector, [read, read, read, read])).toEqual(['none', 'note', 'note', 'escalate']);
    detector.reset();
    expect(run(detector, [read, read, read, read])).toEqual(['none', 'note', 'note', 'escalate']);
  });

  it('leaves varied, successful work alone', () => {
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    const work = Array.from({ length: 40 }, (_, i) => call(i % 2 ? 'files_read' : 'files_list', { path: `dir${i}/file.txt` }));
    expect(run(detector, work).every((action) => action === 'none')).toBe(true);
  });
});
