/**
 * bench/runtime: 1,000 concurrent threads x 5 model calls each through the whole
 * runtime (test channel -> runner -> ChatDelegate -> engine -> provider), against
 * 1,000 plain openai-SDK loops making the same 5,000 requests, with a fake model
 * answering after 100 ms. Each side runs in its own process (for its peak RSS)
 * against the same fake server in this process; rounds alternate. The baseline
 * runs twice a round: its loops all started at once, and started one per
 * event-loop turn (fewer requests in flight at one moment, as pincer's intake
 * spreads its turns' first requests).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startFakeLlm, textReply, toolCallReply, type FakeLlmRequest } from '../test/fakes/llm/server.js';

const run = promisify(execFile);
const LATENCY_MS = 100;

/** Tool calls until the thread has made `iterations` model calls, then text; `wait N` calls the wait tool. */
function responder(request: FakeLlmRequest) {
  const first = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
  const wait = /wait (\d+)/.exec(first);
  const done = request.messages.filter((m) => m.role === 'tool').length;
  if (wait && done === 0) return toolCallReply([{ name: 'wait', arguments: { ms: Number(wait[1]) } }]);
  const target = Number(/iterations=(\d+)/.exec(first)?.[1] ?? 5);
  if (done + 1 >= target || wait) return textReply('done', { latencyMs: LATENCY_MS });
  return toolCallReply([{ id: `call_${done}`, name: 'calculator', arguments: { expression: `${done} + 1` } }], { latencyMs: LATENCY_MS });
}

interface WorkerResult {
  variant: string;
  wallMs: number;
  /** The event loop's busy time during the threads: less disturbed than wall time by other work on the machine. */
  busyMs: number;
  /** Peak RSS of the whole process (start-up included). */
  peakRssKb: number;
  /** RSS just before the threads start, and its peak while they run. */
  rssBeforeKb: number;
  rssPeakKb: number;
  stop?: { p50Ms: number; p99Ms: number; maxMs: number };
}

async function worker(variant: string, url: string, threads: number, iterations: number): Promise<WorkerResult> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/runtime-worker.ts', variant, url, String(threads), String(iterations)], {
    maxBuffer: 1 << 20,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerResult;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs the benchmark and returns its rows. */
export async function runRuntimeBench(threads = 1000, iterations = 5, rounds = 3) {
  const llm = await startFakeLlm({ responder, record: false });
  try {
    const base: WorkerResult[] = [];
    const staggered: WorkerResult[] = [];
    const ours: WorkerResult[] = [];
    for (let round = 0; round < rounds; round++) {
      base.push(await worker('baseline', llm.url, threads, iterations));
      staggered.push(await worker('baseline-staggered', llm.url, threads, iterations));
      ours.push(await worker('pincer', llm.url, threads, iterations));
    }
    const staggeredWall = median(staggered.map((r) => r.wallMs));
    const staggeredBusy = median(staggered.map((r) => r.busyMs));
    const staggeredPerThread = median(staggered.map((r) => (r.rssPeakKb - r.rssBeforeKb) / threads));
    const baseWall = median(base.map((r) => r.wallMs));
    const ourWall = median(ours.map((r) => r.wallMs));
    const baseRss = median(base.map((r) => r.peakRssKb)) / 1024;
    const ourRss = median(ours.map((r) => r.peakRssKb)) / 1024;
    const baseBefore = median(base.map((r) => r.rssBeforeKb)) / 1024;
    const ourBefore = median(ours.map((r) => r.rssBeforeKb)) / 1024;
    // Like for like: what the threads add on each side, (peak during them - just before) / threads.
    const basePerThread = median(base.map((r) => (r.rssPeakKb - r.rssBeforeKb) / threads));
    const ourPerThread = median(ours.map((r) => (r.rssPeakKb - r.rssBeforeKb) / threads));
    const stops = ours.map((r) => r.stop!);
    const baseStops = base.map((r) => r.stop!);
    return [
      { measure: 'wall time (ms)', baseline: baseWall, pincer: ourWall, ratio: ourWall / baseWall },
      { measure: 'event loop busy (ms)', baseline: median(base.map((r) => r.busyMs)), pincer: median(ours.map((r) => r.busyMs)), ratio: median(ours.map((r) => r.busyMs)) / median(base.map((r) => r.busyMs)) },
      // The same loops started one event-loop turn apart instead of all at once: fewer requests in flight at the same moment.
      { measure: 'wall time (ms), baseline loops started one per turn', baseline: staggeredWall, pincer: ourWall, ratio: ourWall / staggeredWall },
      { measure: 'event loop busy (ms), baseline loops started one per turn', baseline: staggeredBusy, pincer: median(ours.map((r) => r.busyMs)), ratio: median(ours.map((r) => r.busyMs)) / staggeredBusy },
      { measure: 'peak RSS of the process (MiB)', baseline: baseRss, pincer: ourRss, ratio: ourRss / baseRss },
      { measure: 'RSS before the threads (MiB)', baseline: baseBefore, pincer: ourBefore, ratio: ourBefore / baseBefore },
      { measure: 'RSS per active thread (KiB): (peak - before) / threads', baseline: basePerThread, pincer: ourPerThread, ratio: ourPerThread / basePerThread },
      { measure: 'RSS per active thread (KiB), baseline loops started one per turn', baseline: staggeredPerThread, pincer: ourPerThread, ratio: ourPerThread / staggeredPerThread },
      // Baseline: a plain loop's running tool aborted, from the abort to the loop's end.
      { measure: '/stop -> stopped p50 (ms)', baseline: median(baseStops.map((s) => s.p50Ms)), pincer: median(stops.map((s) => s.p50Ms)), ratio: NaN },
      { measure: '/stop -> stopped p99 (ms)', baseline: median(baseStops.map((s) => s.p99Ms)), pincer: median(stops.map((s) => s.p99Ms)), ratio: NaN },
    ];
  } finally {
    await llm.close();
  }
}
