/**
 * bench/patterns: running the reply checks' large patterns after garbage
 * collections. The same patterns on the same text, after two full collections
 * each time: (a) through `String.prototype.matchAll`, which runs a copy of the
 * pattern (the way the checks ran them before), and (b) through `matchesOf`,
 * `exec` on the module's own pattern (the way they run now). Rounds alternate
 * (a) and (b); medians are reported. The collections are forced through
 * `--expose-gc`, switched on here at run time.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TOOL_INTENT_PATTERNS } from '../src/engine/guards/tool-intent.js';
import { CLEANING_PATTERNS } from '../src/llm/clean-output.js';
import { matchesOf } from '../src/llm/matches.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CASES = [
  { what: 'tool-intent patterns', patterns: TOOL_INTENT_PATTERNS, text: "let me search for the latest release notes and check what changed since last week's version." },
  { what: 'cleaning patterns', patterns: CLEANING_PATTERNS, text: '<think>The user wants the release notes.</think>Here are the release notes: [see below] and <b>more</b>.' },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Microseconds to run every pattern over `text` once, right after two full collections. */
function afterCollections(patterns: readonly RegExp[], text: string, run: (pattern: RegExp, text: string) => unknown[]): number {
  gc();
  gc();
  const start = performance.now();
  let found = 0;
  for (const pattern of patterns) found += run(pattern, text).length;
  const us = (performance.now() - start) * 1000;
  if (found < 0) throw new Error('unreachable');
  return us;
}

/** Runs the benchmark: one row per group of patterns. */
export async function runPatternsBench(rounds = 20) {
  return CASES.map(({ what, patterns, text }) => {
    const copy: number[] = [];
    const own: number[] = [];
    for (let round = 0; round < rounds; round++) {
      copy.push(afterCollections(patterns, text, (pattern, input) => [...input.matchAll(pattern)]));
      own.push(afterCollections(patterns, text, matchesOf));
    }
    const a = median(copy);
    const b = median(own);
    return { patterns: what, 'matchAll, after 2 full GCs (µs)': a, 'matchesOf, after 2 full GCs (µs)': b, ratio: b / a };
  });
}
