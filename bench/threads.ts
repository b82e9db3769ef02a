/**
 * bench/threads: does memory stay flat as threads come and go? RSS after
 * 100,000 distinct threads (one message each, a model that answers at once
 * with a short text) against RSS after 10,000, in the same process, once the
 * runtime is idle and after a forced GC, with the V8 heap in use beside it
 * (the app's own objects, without the allocator's and SQLite's pages). The app
 * runs in a child process (`--expose-gc`); the fake model runs here so that
 * its memory is not counted.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startFakeLlm, textReply } from '../test/fakes/llm/server.js';

const run = promisify(execFile);

interface Sample {
  threads: number;
  rssKb: number;
  heapUsedKb: number;
  externalKb: number;
  runners?: number;
  /** Users whose inbound rate window the runtime keeps. */
  rateWindows?: number;
  seconds: number;
}

/** Runs the benchmark and returns one row per checkpoint. */
export async function runThreadsBench(checkpoints: number[] = [10_000, 100_000]) {
  const llm = await startFakeLlm({ record: false, responder: () => textReply('Noted.') });
  try {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/threads-worker.ts', llm.url, ...checkpoints.map(String)], {
      maxBuffer: 1 << 20,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const { start, results } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { start: Omit<Sample, 'threads' | 'seconds'>; results: Sample[] };
    const first = results[0]!;
    const mib = (kb: number) => kb / 1024;
    return [
      {
        threads: 0,
        'RSS (MiB)': mib(start.rssKb),
        'heap used (MiB)': mib(start.heapUsedKb),
        'RSS / RSS at first checkpoint': NaN,
        'heap / heap at first checkpoint': NaN,
        runners: 0,
        'rate windows': 0,
        seconds: 0,
      },
      ...results.map((sample) => ({
        threads: sample.threads,
        'RSS (MiB)': mib(sample.rssKb),
        'heap used (MiB)': mib(sample.heapUsedKb),
        'RSS / RSS at first checkpoint': sample.rssKb / first.rssKb,
        'heap / heap at first checkpoint': sample.heapUsedKb / first.heapUsedKb,
        runners: sample.runners ?? NaN,
        'rate windows': sample.rateWindows ?? NaN,
        seconds: sample.seconds,
      })),
    ];
  } finally {
    await llm.close();
  }
}
