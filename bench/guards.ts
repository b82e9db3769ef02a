/**
 * bench/guards: what the loop detectors cost per observed tool call, and
 * whether it grows with the run. One LoopDetector (default thresholds) is
 * shown `history` calls one at a time, as the loop shows it batches; the same
 * calls are also passed, in the same loop, to a function that does nothing
 * with them (the baseline: the loop and the calls themselves). Reported: time
 * per call over the first 1,000 calls and over the last 1,000, each minus the
 * baseline's, and their ratio (about 1 when the cost does not grow).
 */
import { DEFAULT_LOOP_GUARDS } from '../src/config/schema.js';
import { LoopDetector, type ObservedCall } from '../src/engine/guards/loop-detector.js';

const TOOLS = ['http_fetch', 'files_read', 'shell', 'calculator', 'web_search'];
const SPAN = 1_000;

/** A varied run of calls: five tools in turn, arguments that differ from call to call. */
function calls(count: number): ObservedCall[][] {
  return Array.from({ length: count }, (_, i) => [
    { name: TOOLS[i % TOOLS.length]!, arguments: JSON.stringify({ query: `item ${i}`, page: i % 7, path: `dir/${i}.txt` }), ok: i % 11 !== 0 },
  ]);
}

/** Nanoseconds per call of `see` over each batch of `batches`, at its start and at its end. */
function timeSpans(batches: ObservedCall[][], see: (batch: ObservedCall[]) => unknown): { first: number; last: number } {
  const spans: number[] = [];
  let start = performance.now();
  for (let i = 0; i < batches.length; i++) {
    see(batches[i]!);
    if ((i + 1) % SPAN === 0) {
      const now = performance.now();
      spans.push(((now - start) * 1e6) / SPAN);
      start = now;
    }
  }
  return { first: spans[0]!, last: spans.at(-1)! };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs the benchmark: one row, the medians of `rounds` rounds alternating baseline and detectors. */
export async function runGuardsBench(history = 20_000, rounds = 5) {
  const batches = calls(history);
  const base = { first: [] as number[], last: [] as number[] };
  const ours = { first: [] as number[], last: [] as number[] };
  let sink = 0;
  for (let round = 0; round < rounds + 1; round++) {
    const b = timeSpans(batches, (batch) => (sink += batch.length));
    const detector = new LoopDetector(DEFAULT_LOOP_GUARDS);
    const o = timeSpans(batches, (batch) => detector.observe(batch));
    if (round === 0) continue; // warm-up
    base.first.push(b.first);
    base.last.push(b.last);
    ours.first.push(o.first);
    ours.last.push(o.last);
  }
  if (sink < 0) throw new Error('unreachable');
  const first = (median(ours.first) - median(base.first)) / 1000;
  const last = (median(ours.last) - median(base.last)) / 1000;
  return [
    {
      shape: `${history} calls, one per batch`,
      'µs per call, calls 1-1,000 (detectors - baseline)': first,
      [`µs per call, calls ${history - SPAN + 1}-${history} (detectors - baseline)`]: last,
      'last / first': last / first,
    },
  ];
}
