/**
 * bench/jobs: what a background job's step costs beyond the model. `jobs`
 * jobs of `steps` model steps each (a calculator call per step, then the final
 * report), all running at once (`jobs.maxParallel` = jobs), against a fake
 * model that answers every request after 100 ms:
 *
 * - baseline: as many plain loops on the `openai` SDK, each making the same
 *   requests as a job (pincer's first job request, recorded in a probe run,
 *   then the same assistant and tool messages appended step by step);
 * - pincer: the jobs through the real app (scheduler, workers, job delegate,
 *   pipeline, SQLite store), timed from their creation to the last final
 *   message reaching the channel.
 *
 * Each side first runs one warm-up job of two steps (the model ends a job whose
 * goal says "warm up" early), outside the timed span. Each side runs in its own process (its RSS is its own) against the same fake
 * server in this process; rounds alternate, medians are reported. With every
 * job running at once, (pincer − baseline) / steps is the time a job's step
 * takes beyond the model and a plain loop.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmRequest } from '../test/fakes/llm/server.js';
import type { JobRequestTemplate } from './jobs-worker.js';

const run = promisify(execFile);
const LATENCY_MS = 100;

/** What the goal of a warm-up job says: the model ends it after two steps. */
const WARM_UP = 'warm up';

interface WorkerResult {
  wallMs: number;
  /** CPU time of the process's main thread during the jobs (event loop busy), which other work on the machine disturbs less than wall time. */
  busyMs: number;
  rssBeforeKb: number;
  rssPeakKb: number;
  /** Requests the fake model served for the side's process, warm-up included. */
  calls: number;
}

async function worker(llm: FakeLlm, variant: 'baseline' | 'pincer', jobs: number, steps: number, template?: string): Promise<WorkerResult> {
  const served = llm.served;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', ...(variant === 'pincer' && process.env.PINCER_BENCH_PINCER_NODE_ARGS ? process.env.PINCER_BENCH_PINCER_NODE_ARGS.split(' ') : []), 'bench/jobs-worker.ts', variant, llm.url, String(jobs), String(steps), ...(template ? [template] : [])], {
    maxBuffer: 1 << 20,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { ...(JSON.parse(stdout.trim().split('\n').at(-1)!) as Omit<WorkerResult, 'calls'>), calls: llm.served - served };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Runs the benchmark: one row per step count, each the median of `rounds`
 * alternated rounds.
 */
export async function runJobsBench(jobs = 50, stepCounts: number[] = [10, 50, 200], rounds = 3): Promise<Record<string, number | string>[]> {
  let steps = 2;
  let first: FakeLlmRequest | undefined;
  const llm = await startFakeLlm({
    record: false,
    responder: (request: FakeLlmRequest) => {
      const done = request.messages.filter((message) => message.role === 'tool').length;
      const warmUp = request.messages.some((message) => message.role === 'user' && JSON.stringify(message.content).includes(WARM_UP));
      if (done === 0 && !warmUp) first ??= request;
      return done < (warmUp ? 2 : steps) - 1
        ? toolCallReply([{ name: 'calculator', arguments: { expression: `${done}+1` } }], { latencyMs: LATENCY_MS })
        : textReply('DONE: counted', { latencyMs: LATENCY_MS });
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-jobs-template-'));
  try {
    // A probe job: what pincer sends first, for the baseline to send the same.
    await worker(llm, 'pincer', 1, steps);
    if (!first) throw new Error('the probe job made no request');
    const template = join(dir, 'request.json');
    const { messages, tools, max_tokens } = first;
    writeFileSync(template, JSON.stringify({ messages, tools: tools ?? [], max_tokens } satisfies Record<keyof JobRequestTemplate, unknown>));
    const rows: Record<string, number | string>[] = [];
    for (const count of stepCounts) {
      steps = count;
      const base: WorkerResult[] = [];
      const ours: WorkerResult[] = [];
      for (let round = 0; round < rounds; round++) {
        base.push(await worker(llm, 'baseline', jobs, steps, template));
        ours.push(await worker(llm, 'pincer', jobs, steps));
      }
      const baseMs = median(base.map((r) => r.wallMs));
      const ourMs = median(ours.map((r) => r.wallMs));
      const basePerJob = median(base.map((r) => (r.rssPeakKb - r.rssBeforeKb) / jobs));
      const ourPerJob = median(ours.map((r) => (r.rssPeakKb - r.rssBeforeKb) / jobs));
      rows.push({
        shape: `${jobs} jobs x ${steps} steps, ${LATENCY_MS} ms model, all at once`,
        baselineMs: baseMs,
        pincerMs: ourMs,
        ratio: ourMs / baseMs,
        'job step beyond the model (ms/step)': (ourMs - baseMs) / steps,
        // Every job's steps run on one event loop: its extra busy time per job step.
        'event loop per job step beyond the baseline (ms)': (median(ours.map((r) => r.busyMs)) - median(base.map((r) => r.busyMs))) / (steps * jobs),
        'model calls (baseline / pincer)': `${median(base.map((r) => r.calls))} / ${median(ours.map((r) => r.calls))}`,
        'baseline RSS per job (KiB)': basePerJob,
        'pincer RSS per job (KiB)': ourPerJob,
      });
    }
    return rows;
  } finally {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
