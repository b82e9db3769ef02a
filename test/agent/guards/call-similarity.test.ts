import { describe, expect, it } from 'vitest';
import { argumentAgreement, argumentsOf, comparable } from '../../../src/engine/guards/call-similarity.js';

describe('argument agreement', () => {
  it('is the share of keys, over both calls\' keys, whose values agree', () => {
    const base = { a: 1, b: 2, c: 3, d: 4, e: 5 };
    expect(argumentAgreement(base, { ...base, e: 6 })).toBe(0.8);
    expect(argumentAgreement(base, { ...base, d: 0, e: 6 })).toBe(0.6);
    expect(argumentAgreement({ a: 1 }, { a: 1, b: 2 })).toBe(0.5);
    expect(argumentAgreement({}, {})).toBe(1);
  });

  it('reads `./a`, `a`, `a/` and `dir/../a` as the same path, and trims values', () => {
    const forms = ['./a', 'a', 'a/', 'dir/../a', '  a '].map((path) => comparable(path));
    expect(new Set(forms).size).toBe(1);
    expect(comparable('a.txt')).not.toBe(comparable('b.txt'));
    expect(comparable('https://example.com/a/')).not.toBe(comparable('https://example.com/a'));
  });

  it('compares nested values whatever their key order', () => {
    expect(comparable({ range: { from: 1, to: 9 }, tags: ['x', 'y'] })).toBe(comparable({ tags: ['x', 'y'], range: { to: 9, from: 1 } }));
    expect(comparable({ tags: ['x', 'y'] })).not.toBe(comparable({ tags: ['y', 'x'] }));
  });

  it('reads arguments that are not a JSON object as one value', () => {
    expect(argumentsOf('{"path":"a"}')).toEqual({ path: 'a' });
    expect(argumentsOf('[1,2]')).toEqual({ _: [1, 2] });
    expect(argumentsOf(' not json ')).toEqual({ _: 'not json' });
  });
});
