/**
 * bench/jobs: 200 background jobs of 10 model steps each (9 tool calls, then
 * the final report), a fake model that answers every request after 100 ms, and
 * `jobs.maxParallel` 50, through the real app (scheduler, workers, job delegate,
 * pipeline, store). The ideal wall time is steps x latency x jobs / parallelism;
 * the ratio says how far the scheduler is from it. RSS per running job is the
 * peak RSS during the run over the RSS before it, divided by the jobs running
 * at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlmRequest } from '../test/fakes/llm/server.js';
import { TestPlatform } from '../test/support/test-channel.js';

const JOBS = 200;
const STEPS = 10;
const LATENCY_MS = 100;
const PARALLEL = 50;

/** Runs the benchmark once; one row. */
export async function runJobsBench(): Promise<Record<string, number | string>[]> {
  const llm = await startFakeLlm({
    responder: (request: FakeLlmRequest) => {
      const done = request.messages.filter((message) => message.role === 'tool').length;
      return done < STEPS - 1
        ? toolCallReply([{ name: 'calculator', arguments: { expression: `${done}+1` } }], { latencyMs: LATENCY_MS })
        : textReply('DONE: counted', { latencyMs: LATENCY_MS });
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-jobs-'));
  const platform = new TestPlatform();
  const config = parseConfig({
    dataDir: dir,
    owners: ['test:owner'],
    llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false },
    jobs: { maxParallel: PARALLEL, maxIterations: STEPS + 5 },
  });
  const app = await createApp({ config, channels: [{ name: 'test', create: (deps) => platform.createChannel(deps) }] });
  await app.start();
  try {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const started = performance.now();
    const jobs = await Promise.all(
      Array.from({ length: JOBS }, (_, i) =>
        app.jobs.scheduler.create({
          title: `count ${i}`,
          goal: 'count to nine',
          owner: 'test:owner',
          ownerName: 'Owner',
          origin: { channel: 'test', chatId: 'dm-owner', kind: 'dm', scope: 'global' },
          tools: ['calculator'],
          plan: false,
          maxIterations: STEPS + 5,
          timeoutMs: 600_000,
        }),
      ),
    );
    const ids = new Set(jobs.map((job) => job.id));
    for (;;) {
      const finished = (await app.services.jobs.list({ states: ['completed', 'failed', 'cancelled'] })).filter((job) => ids.has(job.id));
      if (finished.length === JOBS) {
        const failed = finished.filter((job) => job.state !== 'completed').length;
        if (failed) throw new Error(`${failed} jobs did not complete`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    const idealMs = (STEPS * LATENCY_MS * JOBS) / PARALLEL;
    return [
      {
        shape: `${JOBS} jobs x ${STEPS} steps, ${LATENCY_MS} ms model, ${PARALLEL} at once`,
        modelCalls: llm.served,
        idealMs,
        wallMs,
        ratio: wallMs / idealMs,
        rssPerRunningJobKiB: (rssPeak - rssBefore) / 1024 / PARALLEL,
      },
    ];
  } finally {
    await app.stop('bench over');
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
