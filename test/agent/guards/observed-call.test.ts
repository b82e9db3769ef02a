/**
 * How a repeated call is named in a loop finding, the line a person reads in the
 * loop question and the model reads in its notice: the tool with its first
 * arguments, each value clipped to one short line.
 */
import { describe, expect, it } from 'vitest';
import { CallCyclesDetector } from '../../../src/engine/guards/call-cycles.js';
import { CallWindowDetector } from '../../../src/engine/guards/call-window.js';
import { FailureStreakDetector } from '../../../src/engine/guards/failure-streak.js';
import { clip, describeCall, seeCall } from '../../../src/engine/guards/observed-call.js';

const seen = (name: string, args: string) => seeCall({ name, arguments: args, ok: true });

/** The summary of the same call three times among the last ten. */
function windowSummary(name: string, args: string): string | undefined {
  const detector = new CallWindowDetector(10, 3);
  const call = seen(name, args);
  detector.see(call);
  detector.see(call);
  return detector.see(call)?.summary;
}

describe('a repeated call in a finding', () => {
  it('shows the tool with its first two arguments, in the order the model sent them', () => {
    expect(windowSummary('search', '{"q":"pincer","limit":5,"page":2}')).toBe('search with q "pincer", limit 5, 3 times within the last 3 calls.');
  });

  it('shows only the tool when the call has no arguments', () => {
    expect(windowSummary('time', '{}')).toBe('time, 3 times within the last 3 calls.');
  });

  it('shows arguments that are not an object as they are, without a name', () => {
    expect(windowSummary('shell', 'ls -la')).toBe('shell with "ls -la", 3 times within the last 3 calls.');
    expect(windowSummary('calculator', '42')).toBe('calculator with 42, 3 times within the last 3 calls.');
  });

  it('clips a long value to one line of 60 characters', () => {
    const summary = windowSummary('files_write', JSON.stringify({ path: 'a.txt', content: `first line\n${'x'.repeat(200)}` }))!;
    const content = /content (.*), 3 times/.exec(summary)![1]!;
    expect(content).toHaveLength(60);
    expect(content.endsWith('…')).toBe(true);
    expect(content.startsWith('"first line\\nxxx')).toBe(true);
  });

  it('shows one argument per step in a cycle of one tool', () => {
    const detector = new CallCyclesDetector(5);
    const a = seen('files_read', '{"path":"a.txt","encoding":"utf8"}');
    const b = seen('files_read', '{"path":"b.txt","encoding":"utf8"}');
    const found = [a, b, a, b].map((call) => detector.see(call)).at(-1);
    expect(found?.summary).toBe('the cycle files_read with path "a.txt" → files_read with path "b.txt", twice in a row.');
  });

  it('tells apart the same tool with different arguments, and finds the same call whatever its spelling', () => {
    const detector = new CallWindowDetector(10, 2);
    expect(detector.see(seen('files_read', '{"path":"a.txt"}'))).toBeUndefined();
    expect(detector.see(seen('files_read', '{"path":"b.txt"}'))).toBeUndefined();
    expect(detector.see(seen('files_list', '{"path":"a.txt"}'))).toBeUndefined();
    expect(detector.see(seen('files_read', '{ "path": "./a.txt" }'))?.summary).toBe('files_read with path "./a.txt", 2 times within the last 4 calls.');
  });
});

describe('clip', () => {
  it('keeps a short text whole, on one line, without the spaces around it', () => {
    expect(clip('  timed   out\n after 15 s  ', 80)).toBe('timed out after 15 s');
    expect(clip('x'.repeat(80), 80)).toBe('x'.repeat(80));
  });

  it('cuts a longer text to the limit, the last character an ellipsis', () => {
    expect(clip('x'.repeat(81), 80)).toBe(`${'x'.repeat(79)}…`);
  });

  it('is what a failure streak shows of the last error', () => {
    const detector = new FailureStreakDetector(1);
    const found = detector.see(seeCall({ name: 'http_fetch', arguments: '{}', ok: false, error: '\n  Error:   connection refused \n' }));
    expect(found?.summary).toBe('1 failing tool calls in a row (last: http_fetch: Error: connection refused).');
  });
});

describe('describeCall', () => {
  it('shows as many arguments as asked', () => {
    const call = seen('search', '{"q":"pincer","limit":5}');
    expect(describeCall(call, 1)).toBe('search with q "pincer"');
    expect(describeCall(call)).toBe('search with q "pincer", limit 5');
  });
});
