/**
 * Runs the built product the way it is deployed: `node dist/main.js`,
 * configured only through environment variables, stdin a pipe (no TTY).
 * Every process and temp folder made here is tracked so that `cleanUp()`
 * (called from afterEach/afterAll) kills and removes them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN } from './build.js';

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running (or ended) `node dist/main.js`. */
export interface PincerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The data folder it was given. */
  readonly dataDir: string;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr, for failure messages and log checks. */
  output(): string;
  /** Resolves when the process has ended. */
  readonly exited: Promise<Exit>;
  /** Whether the process is still running. */
  running(): boolean;
  /** Waits until `text` appears in stdout or stderr. */
  waitForOutput(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Waits for the exit, failing after `timeoutMs`. */
  waitForExit(timeoutMs?: number): Promise<Exit>;
}

const children = new Set<ChildProcess>();
const folders = new Set<string>();

/** A fresh temp folder, removed by {@link cleanUp}. */
export function tempDir(prefix = 'pincer-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.add(dir);
  return dir;
}

/** The base environment: nothing of the parent's but PATH and HOME. */
export function baseEnv(dataDir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    PINCER_DATA_DIR: dataDir,
    PINCER_LOG_LEVEL: 'info',
  };
}

/**
 * Starts `node dist/main.js` with `env` on top of {@link baseEnv}. The working
 * directory is an empty temp folder, so no `config/pincer.yaml` is picked up.
 */
export function startPincer(env: Record<string, string>, options: { dataDir?: string; cwd?: string } = {}): PincerProcess {
  const dataDir = options.dataDir ?? tempDir();
  const cwd = options.cwd ?? tempDir('pincer-e2e-cwd-');
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    env: { ...baseEnv(dataDir), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: false,
  });
  if (child.pid === undefined) throw new Error('could not start node dist/main.js');
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const output = () => `--- stdout ---\n${out}\n--- stderr ---\n${err}`;
  return {
    child,
    pid: child.pid,
    dataDir,
    stdout: () => out,
    stderr: () => err,
    output,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    async waitForOutput(text, timeoutMs = 15_000) {
      const seen = () => (typeof text === 'string' ? (out + err).includes(text) : text.test(out + err));
      await waitUntil(seen, timeoutMs, () => `output ${String(text)}\n${output()}`);
    },
    async waitForExit(timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`process ${child.pid} still running after ${timeoutMs} ms\n${output()}`)), timeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Polls `check` every 20 ms; fails with `describe()` after `timeoutMs`. */
export async function waitUntil<T>(check: () => T | undefined | null | false, timeoutMs: number, describe: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Kills (by PID) every process started here that still runs, and removes the temp folders. */
export async function cleanUp(): Promise<void> {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(child.pid, 'SIGKILL');
        await gone;
      } catch {
        // Already gone.
      }
    }
    children.delete(child);
  }
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  folders.clear();
}
