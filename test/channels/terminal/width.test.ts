import { describe, expect, it } from 'vitest';
import { columnsOf, rowsOf } from '../../../src/channels/terminal/width.js';

describe('columnsOf', () => {
  it.each([
    ['plain', 5],
    ['\x1b[1mbold\x1b[22m', 4],
    ['\x1b]8;;https://example.com\x07link\x1b]8;;\x07', 4],
    ['日本語', 6],
    ['✅ ok', 5],
    ['e\u0301', 1],
    ['', 0],
  ])('measures %j as %i columns', (line, columns) => {
    expect(columnsOf(line)).toBe(columns);
  });
});

describe('rowsOf', () => {
  it('counts each line once and a long line once per started screen width', () => {
    expect(rowsOf('a\n\nb', 10)).toBe(3);
    expect(rowsOf('x'.repeat(10), 10)).toBe(1);
    expect(rowsOf('x'.repeat(11), 10)).toBe(2);
    expect(rowsOf('日本語日本語', 10)).toBe(2);
  });
});
