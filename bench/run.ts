/**
 * `npm run bench`: runs every benchmark and prints its table. Each compares
 * pincer with a baseline measured in the same run, since machines are noisy.
 * `npm run bench -- loop` runs one by name.
 */
import { runLoopOverhead } from './loop-overhead.js';

const only = process.argv[2];

function table(rows: Record<string, unknown>[]): void {
  console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toFixed(4)) : v]))));
}

if (!only || only === 'loop') {
  console.log('bench/loop-overhead: plain openai-SDK loop (a) vs runAgenticLoop (b), same fake server');
  table(await runLoopOverhead());
}
if (!only || only === 'runtime') {
  const { runRuntimeBench } = await import('./runtime.js');
  console.log('bench/runtime: 1,000 threads x 5 iterations, fake model with 100 ms latency');
  table(await runRuntimeBench());
}
if (!only || only === 'latency') {
  const { runReplyLatencyBench } = await import('./reply-latency.js');
  console.log('bench/reply-latency: message delivered by the platform fake -> answer received by it, production configuration');
  table(await runReplyLatencyBench());
}
if (!only || only === 'threads') {
  const { runThreadsBench } = await import('./threads.js');
  console.log('bench/threads: memory after 10,000 and 100,000 distinct threads, idle, after a forced GC');
  table(await runThreadsBench());
}
if (!only || only === 'jobs') {
  const { runJobsBench } = await import('./jobs.js');
  console.log('bench/jobs: 200 jobs x 10 model steps, model latency 100 ms, 50 at once, against the ideal wall time');
  table(await runJobsBench());
}
if (!only || only === 'history') {
  const { runHistoryBench } = await import('./history.js');
  console.log('bench/history: bytes and time per turn (2 messages appended and saved) on SQLite, whole record (a) vs thread log (b)');
  table(await runHistoryBench());
}
if (!only || only === 'cluster') {
  const { runClusterBench, CLUSTER_PARTS } = await import('./cluster.js');
  const part = CLUSTER_PARTS.find((name) => name === process.argv[3]);
  console.log(
    'bench/cluster: the built product, one instance vs three on one Redis store (400 messages, 200 threads, model 100 ms), failover after a SIGKILL (lease TTL 2 s), capacity (model 1 s, 4 turn slots), rolling restart (200 conversations)',
  );
  table(await runClusterBench(part ? [part] : undefined));
}
