/**
 * `npm run bench`: runs every benchmark and prints its table. Each compares
 * pincer with a baseline measured in the same run, since machines are noisy.
 * `npm run bench -- loop` runs one by name; numbers after the name size it
 * (see each benchmark's line below and bench/README.md).
 */
import { runLoopOverhead } from './loop-overhead.js';

const only = process.argv[2];
/** Numbers after the name, e.g. `jobs 50 10,200 1`: each argument a number or a comma-separated list of them. */
const sizes = process.argv.slice(3).map((arg) => arg.split(',').map(Number));
const size = (index: number): number | undefined => sizes[index]?.[0];
const list = (index: number): number[] | undefined => sizes[index];

function table(rows: Record<string, unknown>[]): void {
  console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toFixed(4)) : v]))));
}

if (!only || only === 'loop') {
  // `loop [rounds]`, or `loop r1,r2,r3`: rounds of each shape (1 x 10, 1 x 200, 200 x 10).
  console.log('bench/loop-overhead: plain openai-SDK loop (a) vs runAgenticLoop (b), same fake server');
  table(await runLoopOverhead(list(0)));
}
if (!only || only === 'runtime') {
  const { runRuntimeBench } = await import('./runtime.js');
  // `runtime [threads] [iterations] [rounds]`
  console.log('bench/runtime: 1,000 threads x 5 iterations, fake model with 100 ms latency');
  table(await runRuntimeBench(size(0), size(1), size(2)));
}
if (!only || only === 'latency') {
  const { runReplyLatencyBench } = await import('./reply-latency.js');
  console.log('bench/reply-latency: message delivered by the platform fake -> answer received by it, production configuration');
  table(await runReplyLatencyBench());
}
if (!only || only === 'threads') {
  const { runThreadsBench } = await import('./threads.js');
  // `threads [checkpoint ...]`
  console.log('bench/threads: memory after 10,000 and 100,000 distinct threads, idle, after a forced GC');
  table(await runThreadsBench(sizes.length ? sizes.flat() : undefined));
}
if (!only || only === 'jobs') {
  const { runJobsBench } = await import('./jobs.js');
  // `jobs [jobs] [steps,steps,...] [rounds]`
  console.log('bench/jobs: 50 jobs at once x 10, 50 and 200 model steps, model latency 100 ms, against plain openai-SDK loops making the same requests');
  table(await runJobsBench(size(0), list(1), size(2)));
}
if (!only || only === 'history') {
  const { runHistoryBench } = await import('./history.js');
  console.log('bench/history: bytes and time per turn (2 messages appended and saved) on SQLite, whole record (a) vs thread log (b)');
  table(await runHistoryBench());
}
if (!only || only === 'guards') {
  const { runGuardsBench } = await import('./guards.js');
  // `guards [history] [rounds]`
  console.log('bench/guards: the loop detectors per observed call, at the start of a run and after 20,000 calls, against a loop that does nothing with the calls');
  table(await runGuardsBench(size(0), size(1)));
}
if (!only || only === 'patterns') {
  const { runPatternsBench } = await import('./patterns.js');
  // `patterns [rounds]`
  console.log('bench/patterns: the reply checks\' patterns after full garbage collections, matchAll (a copy of the pattern) vs exec on the pattern itself');
  table(await runPatternsBench(size(0)));
}
if (!only || only === 'redaction') {
  const { runRedactionBench } = await import('./redaction.js');
  // `redaction [lengths] [requests] [rounds]`
  console.log('bench/redaction: redacting a request\'s conversation, every message again vs wire forms kept per message');
  table(await runRedactionBench(list(0), size(1), size(2)));
}
if (!only || only === 'cluster') {
  const { runClusterBench, CLUSTER_PARTS } = await import('./cluster.js');
  const part = CLUSTER_PARTS.find((name) => name === process.argv[3]);
  console.log(
    'bench/cluster: the built product, one instance vs three on one Redis store (400 messages, 200 threads, model 100 ms), failover after a SIGKILL (lease TTL 2 s), capacity (model 1 s, 4 turn slots), rolling restart (200 conversations)',
  );
  table(await runClusterBench(part ? [part] : undefined));
}
if (!only || only === 'startup') {
  const { runStartupBench } = await import('./startup.js');
  console.log('bench/startup: the built program started like a user starts it, terminal only and Telegram (its fake), against node -e; medians');
  table(await runStartupBench());
}
if (only === 'soak') {
  const { runSoakBench } = await import('./soak.js');
  // `soak [minutes] [maxContextTokens] [conversations]` (0 or nothing: the default of 32,000 and 20);
  // not part of a plain `npm run bench` (it runs for ten minutes)
  console.log('bench/soak: mixed traffic for minutes, memory sampled every 10 s after a forced GC, the slope after the warm-up, and what grew between two heap snapshots');
  table(await runSoakBench(size(0), { maxContextTokens: size(1) || 0, conversations: size(2) || 20 }));
}
