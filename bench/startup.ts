/**
 * bench/startup: the built product started the way a user starts it
 * (`node dist/main.js`, configured through the environment), against a bare
 * `node -e` in the same run.
 *
 * - Cold start: from spawning the process to ready: "pincer is running" in its
 *   log with the terminal alone, the first `getUpdates` reaching the Telegram
 *   fake with Telegram alone; for `node -e`, its first line of output.
 * - Idle RSS: the process's resident memory 2 s after ready, read from
 *   /proc/<pid>/status (Linux only; elsewhere the column is empty).
 * - Files loaded: the modules the process loaded by then (ES modules through a
 *   loader hook, CommonJS ones through the require cache), in a separate start
 *   so that tracing does not slow the timed ones.
 *
 * Medians of ROUNDS starts each, interleaved so that the machine's noise falls
 * on all of them alike. PINCER_BENCH_MAIN names another built entry point to
 * measure instead of this checkout's dist/main.js (a before-and-after
 * comparison in one run).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeLlm, type FakeLlm } from '../test/fakes/llm/server.js';
import { startFakeTelegram } from '../test/fakes/telegram/index.js';
import { ensureBuilt, MAIN } from '../test/e2e/build.js';

const ROUNDS = Number(process.env.PINCER_BENCH_ROUNDS ?? 7);
const IDLE_MS = 2_000;
const TRACE = fileURLToPath(new URL('../test/e2e/module-trace.mjs', import.meta.url));

type Row = Record<string, number | string>;

/** One start: how long until ready, and the resident memory once idle. */
interface Sample {
  readyMs: number;
  rssMb: number | undefined;
  files: number | undefined;
}

/** What to start and how to tell it is ready. */
interface Subject {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** Resolves when the process is ready; `output` is what it printed so far. */
  ready(output: () => string): Promise<void>;
}

/** Resident memory of `pid` in MB, from /proc; undefined where there is none. */
function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench/startup: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Starts `subject` once: timed, or traced for the files it loads. */
async function startOnce(subject: Subject, traced: boolean): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-start-'));
  const trace = join(dir, 'modules.txt');
  writeFileSync(trace, '');
  const started = performance.now();
  const child = spawn(process.execPath, subject.args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      PINCER_DATA_DIR: join(dir, 'data'),
      PINCER_LOG_LEVEL: 'info',
      ...subject.env,
      ...(traced ? { NODE_OPTIONS: `--import=${TRACE}`, PINCER_MODULE_TRACE: trace } : {}),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await subject.ready(() => output);
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const rss = traced ? undefined : rssMb(child.pid!);
    child.stdin.end();
    child.kill('SIGTERM');
    await exited;
    const loaded = traced ? new Set(readFileSync(trace, 'utf8').split('\n').filter((line) => line.startsWith('file:')).map((line) => line.split(' ')[0]!)) : undefined;
    // PINCER_BENCH_TRACE_DIR=<folder>: the list of the files each subject loaded, to see what a start loads.
    if (loaded && process.env.PINCER_BENCH_TRACE_DIR) writeFileSync(join(process.env.PINCER_BENCH_TRACE_DIR, `${subject.name.replace(/[^a-z0-9]+/gi, '-')}.txt`), [...loaded].sort().join('\n'));
    const files = loaded?.size;
    return { readyMs, rssMb: rss, files };
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs the benchmark: a row per subject, and each pincer row's difference from `node -e`. */
export async function runStartupBench(): Promise<Row[]> {
  const main = process.env.PINCER_BENCH_MAIN ?? MAIN;
  if (!process.env.PINCER_BENCH_MAIN) ensureBuilt();
  const llm: FakeLlm = await startFakeLlm();
  const telegram = await startFakeTelegram();
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-config-'));
  const terminalConfig = join(dir, 'terminal.yaml');
  writeFileSync(terminalConfig, 'terminal:\n  enabled: on\n');
  const model = { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-bench', PINCER_MODEL: 'fake-model' };
  const subjects: Subject[] = [
    {
      name: 'node -e (baseline)',
      args: ['-e', "process.stdout.write('ready\\n'); setInterval(() => {}, 1000)"],
      env: {},
      ready: (output) => until(() => output().includes('ready'), 10_000, 'node -e'),
    },
    {
      name: 'pincer, terminal only',
      args: [main],
      env: { ...model, PINCER_CONFIG: terminalConfig },
      ready: (output) => until(() => output().includes('pincer is running'), 20_000, 'pincer is running'),
    },
    {
      name: 'pincer, Telegram (first poll)',
      args: [main],
      env: { ...model, TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot, PINCER_OWNERS: 'telegram:1' },
      ready: () => {
        const before = telegram.calls.filter((call) => call.method === 'getUpdates').length;
        return until(() => telegram.calls.filter((call) => call.method === 'getUpdates').length > before, 20_000, 'the first getUpdates');
      },
    },
  ];
  const samples = new Map<string, Sample[]>(subjects.map((subject) => [subject.name, []]));
  const files = new Map<string, number | undefined>();
  try {
    // One untimed start each warms the file cache, and counts the files loaded.
    for (const subject of subjects) files.set(subject.name, (await startOnce(subject, true)).files);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const subject of subjects) samples.get(subject.name)!.push(await startOnce(subject, false));
    }
  } finally {
    await telegram.close();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const base = samples.get(subjects[0]!.name)!;
  const baseReady = median(base.map((sample) => sample.readyMs));
  const baseRss = median(base.map((sample) => sample.rssMb ?? 0));
  return subjects.map((subject) => {
    const runs = samples.get(subject.name)!;
    const ready = median(runs.map((sample) => sample.readyMs));
    const rss = runs.every((sample) => sample.rssMb !== undefined) ? median(runs.map((sample) => sample.rssMb!)) : undefined;
    return {
      subject: subject.name,
      'ready ms (median)': ready,
      'beyond node -e ms': subject === subjects[0] ? 0 : ready - baseReady,
      'idle RSS MB (median)': rss ?? '',
      'beyond node -e MB': rss === undefined ? '' : subject === subjects[0] ? 0 : rss - baseRss,
      'files loaded': files.get(subject.name) ?? '',
      rounds: runs.length,
    };
  });
}
