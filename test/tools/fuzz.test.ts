import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { calculatorTool } from '../../src/tools/builtin/calculator.js';
import type { ToolCall } from '../../src/llm/types.js';
import type { CallResult, Tool } from '../../src/tools/types.js';
import { echoTool, fakeTool, makeContext, makeHarness, memoryAudit, type Harness } from './support.js';

/** mulberry32: a small deterministic generator, so a failure replays exactly. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

type Rng = ReturnType<typeof seeded>;

const UNICODE = ['é', '😀', '\u202e', '\ud800', '\u0000', '中文', '\u200b', 'ß', '\\', '"', '\n', '𝔘'];

function randomText(rng: Rng, max: number): string {
  const length = rng.int(max);
  let out = '';
  for (let i = 0; i < length; i++) out += rng.next() < 0.3 ? rng.pick(UNICODE) : String.fromCharCode(32 + rng.int(95));
  return out;
}

function deep(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** A value of a JSON type other than string. */
function notAString(rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => rng.int(1000) - 500,
    () => rng.next() < 0.5,
    () => null,
    () => [randomText(rng, 5)],
    () => ({ nested: randomText(rng, 5) }),
    () => JSON.parse(deep(50 + rng.int(200), '[', ']')),
  ])();
}

/** One malformed call: bad JSON, wrong types, huge strings, deep nesting, unknown names, unicode. */
function malformedCall(rng: Rng, id: number): ToolCall {
  const name = rng.pick(['echo', 'echo', 'shape', 'calculator']);
  const generators: Array<() => ToolCall> = [
    () => ({ id: `${id}`, name: rng.pick(['', 'ech0', randomText(rng, 40), 'x'.repeat(5000), 'echo ', '🔧']), arguments: '{}' }),
    () => ({ id: `${id}`, name, arguments: randomText(rng, 60) + '{' }),
    () => ({ id: `${id}`, name, arguments: rng.pick(['{', '{"text": }', "{'text': 'a'}", '{"text": "a",}', '{"text" "a"}', 'undefined', '{"a":1}}', '\u0000']) }),
    () => ({ id: `${id}`, name, arguments: rng.pick(['[]', '42', '"text"', 'true', '[{"text":"a"}]', '-0', '1e999']) }),
    () => ({ id: `${id}`, name, arguments: deep(1000 + rng.int(50_000), '[', ']') }),
    () => ({ id: `${id}`, name, arguments: deep(1000 + rng.int(5000), '{"a":', '}') }),
    () => ({ id: `${id}`, name: 'echo', arguments: JSON.stringify({ text: notAString(rng), times: rng.int(3) + 1 }) }),
    () => ({ id: `${id}`, name: 'echo', arguments: JSON.stringify({ text: 'ok', times: rng.pick(['many', 0, 99, 2.5, -1, [], {}, '1e400']) }) }),
    () => ({ id: `${id}`, name: 'echo', arguments: JSON.stringify({ text: 'y'.repeat(5001 + rng.int(200_000)) }) }),
    () => ({ id: `${id}`, name: 'echo', arguments: JSON.stringify({ [randomText(rng, 10) || 'k']: randomText(rng, 30) }) }),
    () => ({ id: `${id}`, name: 'shape', arguments: JSON.stringify({ point: rng.pick(['{"x":1}', '[1,2]', 'nope', { x: 'a', y: [] }]), tags: rng.pick([3, 'a,b', [1, 2], deep(300, '[', ']')]) }) }),
    () => ({ id: `${id}`, name: 'calculator', arguments: JSON.stringify({ expression: `${randomText(rng, 40)}))#` }) }),
    () => ({ id: `${id}`, name: 'calculator', arguments: JSON.stringify({ expression: deep(300 + rng.int(3000), '(', ')') }) }),
    () => ({ id: `${id}`, name, arguments: `{"text": "${'\\ud83d'.repeat(1 + rng.int(4))}${randomText(rng, 20)}` }),
  ];
  return rng.pick(generators)();
}

const shapeTool: Tool = fakeTool({
  name: 'shape',
  parameters: z.strictObject({ point: z.object({ x: z.number(), y: z.number() }), tags: z.array(z.string()).max(10) }),
  execute: async () => 'shape accepted',
});

describe('fuzz: malformed tool calls through the pipeline', () => {
  let harness: Harness;
  const audit = memoryAudit();
  beforeAll(async () => {
    harness = await makeHarness([echoTool(), shapeTool, calculatorTool() as Tool], { audit });
  });
  afterAll(() => harness.close());

  it('gives every one of 1,200 malformed calls a short, readable error and never throws', async () => {
    const rng = seeded(20240611);
    const calls = Array.from({ length: 1200 }, (_, i) => malformedCall(rng, i));
    const results: CallResult[] = [];
    // Half one by one, half in batches of 10, to cover both entry points.
    for (const c of calls.slice(0, 600)) results.push(await harness.pipeline.run(c, makeContext()));
    for (let i = 600; i < calls.length; i += 10) results.push(...(await harness.pipeline.runBatch(calls.slice(i, i + 10), makeContext())));

    expect(results).toHaveLength(1200);
    const unreadable = results.filter((r) => r.status !== 'error' || !/^Error: \S/.test(r.content) || r.content.length > 2100);
    expect(unreadable.map((r) => ({ call: r.call.arguments.slice(0, 80), status: r.status, content: r.content.slice(0, 200) }))).toEqual([]);
    expect(results.map((r) => r.call.id)).toEqual(calls.map((c) => c.id));
    expect(audit.records).toHaveLength(1200);
    // The generator reaches every stage that can refuse a malformed call.
    const kinds = new Set(results.map((r) => r.content.split(/[("]/)[0]));
    expect([...kinds]).toEqual(
      expect.arrayContaining(['Error: unknown tool ', 'Error: the arguments for ', 'Error: invalid arguments for ', 'Error: unexpected character ']),
    );
  });
});
