import { describe, expect, it } from 'vitest';
import { matchesOf } from '../../src/llm/matches.js';

const same = (pattern: RegExp, text: string) => {
  const expected = [...text.matchAll(pattern)].map((m) => [m.index, ...m]);
  expect(matchesOf(pattern, text).map((m) => [m.index, ...m])).toEqual(expected);
  expect(pattern.lastIndex).toBe(0);
};

describe('matchesOf', () => {
  it('finds what matchAll finds', () => {
    same(/a(\d)/g, 'a1 b2 a3');
    same(/x/g, 'none');
    same(/<\s*think\s*>/gi, '<THINK> text < think >');
  });

  it('steps over empty matches, whole surrogate pairs in unicode mode', () => {
    same(/\b/g, 'two words');
    same(/(?:)/gu, 'a😀b');
    same(/(?:)/g, 'a😀b');
  });

  it('needs a global pattern', () => {
    expect(() => matchesOf(/a/, 'a')).toThrow(TypeError);
  });
});
