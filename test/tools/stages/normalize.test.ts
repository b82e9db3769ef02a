import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolParametersSchema } from '../../../src/tools/schema.js';
import { normalizeArguments } from '../../../src/tools/stages/normalize.js';

const schema = toolParametersSchema(
  z.object({
    count: z.number().int().optional(),
    ratio: z.number().optional(),
    flag: z.boolean().optional(),
    tags: z.array(z.string()).optional(),
    point: z.object({ x: z.number(), y: z.number() }).optional(),
    maybe: z.number().nullable().optional(),
    label: z.string().optional(),
    nested: z.array(z.object({ n: z.number() })).optional(),
  }),
);

const normalize = (raw: unknown) => normalizeArguments('t', raw, schema);

describe('normalizeArguments', () => {
  it('treats empty, blank and null arguments as no arguments', () => {
    for (const raw of ['', '   ', 'null', undefined, null]) expect(normalize(raw)).toEqual({ ok: true, params: {} });
  });

  it('coerces stringified numbers, booleans, arrays and objects where the schema wants them', () => {
    const raw = JSON.stringify({
      count: '42',
      ratio: ' 0.5 ',
      flag: 'TRUE',
      tags: '["a","b"]',
      point: '{"x":"1","y":2}',
      maybe: 'null',
      nested: [{ n: '7' }],
    });
    expect(normalize(raw)).toEqual({
      ok: true,
      params: { count: 42, ratio: 0.5, flag: true, tags: ['a', 'b'], point: { x: 1, y: 2 }, maybe: null, nested: [{ n: 7 }] },
    });
  });

  it('leaves strings alone where the schema wants strings, and values it cannot coerce', () => {
    const raw = JSON.stringify({ label: '42', count: 'many', flag: 'yes', tags: '[oops', ratio: '' });
    expect(normalize(raw)).toEqual({ ok: true, params: { label: '42', count: 'many', flag: 'yes', tags: '[oops', ratio: '' } });
  });

  it('unwraps arguments encoded twice', () => {
    expect(normalize(JSON.stringify(JSON.stringify({ count: 1 })))).toEqual({ ok: true, params: { count: 1 } });
  });

  it('refuses JSON that is not an object', () => {
    expect(normalize('42')).toEqual({ ok: false, error: 'Error: the arguments for "t" must be a JSON object, not a number.' });
    expect(normalize('"text"')).toEqual({ ok: false, error: 'Error: the arguments for "t" must be a JSON object, not a string.' });
  });

  it('names the JSON problem and keeps the message short for huge input', () => {
    const result = normalize(`{"label": ${'x'.repeat(100_000)}}`);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/^Error: the arguments for "t" are not valid JSON \(.+\)\. Send one JSON object\.$/);
      expect(result.error.length).toBeLessThan(260);
    }
  });
});
