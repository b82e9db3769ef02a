/**
 * The measuring side of bench/threads, run with `--expose-gc` in its own
 * process: the whole app over a bare in-process channel that only counts the
 * answers (the test platform records every event and message, which would grow
 * with the threads itself). One message in each of `checkpoints.at(-1)`
 * distinct threads; at each checkpoint, once the runtime is idle and after a
 * forced GC, the memory is read. Prints one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { CountingChannel } from './counting-channel.js';

const [llmUrl, ...checkpointArgs] = process.argv.slice(2) as [string, ...string[]];
const checkpoints = checkpointArgs.map(Number);
/** Threads started at once; a batch is answered before the next starts. */
const BATCH = 500;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

async function settledMemory() {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rssKb: rss / 1024, heapUsedKb: heapUsed / 1024, externalKb: external / 1024 };
}

const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-threads-'));
const channel = new CountingChannel();
const config = parseConfig({
  dataDir: dir,
  logLevel: 'silent',
  terminal: { enabled: 'off' },
  llm: { baseUrl: llmUrl, apiKey: 'bench', model: 'fake-model' },
});
const app = await createApp({ config, channels: [{ name: 'bench', create: () => channel }] });
await app.start();
const start = await settledMemory();
const results: Record<string, unknown>[] = [];
let sent = 0;
const began = performance.now();
for (const checkpoint of checkpoints) {
  while (sent < checkpoint) {
    const batch = Math.min(BATCH, checkpoint - sent);
    for (let i = 0; i < batch; i++) channel.write(sent + i);
    sent += batch;
    await channel.reached(sent);
  }
  await app.runtime.idle();
  // Background history writes (queued without waiting) finish shortly after the answers.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  // Reflect.get: what the runtime still holds per thread and per user (private), to explain growth.
  const runners = (Reflect.get(app.runtime, 'runners') as Map<string, unknown> | undefined)?.size;
  const rateWindows = (Reflect.get(app.runtime, 'deployment') as { senderRate?: { trackedUsers?: number } } | undefined)?.senderRate?.trackedUsers;
  results.push({ threads: checkpoint, ...(await settledMemory()), runners, rateWindows, seconds: (performance.now() - began) / 1000 });
}
await app.stop('bench over');
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ start, results })}\n`);
process.exit(0);
