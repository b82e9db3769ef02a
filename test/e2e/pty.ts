/**
 * The built product on a pseudo-terminal (util-linux `script` gives it a TTY):
 * type keys as a person does and read the screen as they see it, colours and
 * cursor moves removed. Every process started here is killed by
 * {@link killPty} (called from afterEach).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { MAIN } from './build.js';
import { tempDir, waitUntil } from './pincer.js';

/** Whether `script` can give the product a pseudo-terminal here. */
export const hasScript = spawnSync('script', ['--version']).status === 0;

// CSI sequences (colours, cursor moves, line clears) and carriage returns.
// eslint-disable-next-line no-control-regex -- removing escape sequences is the point
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\r/g;

/** Keys as the terminal sends them. */
export const KEYS = { enter: '\r', ctrlC: '\x03', ctrlD: '\x04' } as const;

/** A value quoted for sh. */
function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** The product on a pty, and what a user sees on it. */
export interface PtyRun {
  /** The exit code, once it has ended. */
  readonly exited: Promise<number | null>;
  /** What the screen shows, in order, without colours and cursor moves. */
  screen(): string;
  /** Everything written to the pty, escape sequences included. */
  raw(): string;
  /** Keys as the terminal sends them: Enter is a carriage return. */
  type(keys: string): void;
  /** Waits until `text` has appeared `count` times on screen. */
  see(text: string, count?: number, timeoutMs?: number): Promise<unknown>;
  /** The exit code, or 'still running' after `withinMs`. */
  exitWithin(withinMs: number): Promise<number | null | 'still running'>;
}

/** The environment of a run: PATH, HOME and a colour terminal, nothing else of the parent's. */
export function ptyEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm-256color', ...extra };
}

/** `node dist/main.js` under a 120x40 pty with exactly `env`, in an empty working folder. */
export function startOnPty(env: Record<string, string>): PtyRun {
  const assignments = Object.entries(env).map(([key, value]) => `${key}=${quote(value)}`);
  const cwd = tempDir('pincer-e2e-cwd-');
  const command = `stty cols 120 rows 40; exec env -i ${assignments.join(' ')} ${quote(process.execPath)} ${quote(MAIN)}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: env.HOME ?? '/tmp', TERM: 'xterm-256color' },
    detached: false,
  });
  running.add(child);
  let raw = '';
  child.stdout.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const screen = () => raw.replace(ANSI, '');
  return {
    exited,
    screen,
    raw: () => raw,
    type: (keys) => void child.stdin.write(keys),
    see: (text, count = 1, timeoutMs = 15_000) =>
      waitUntil(
        () => screen().split(text).length - 1 >= count,
        timeoutMs,
        () => `${JSON.stringify(text)} on screen:\n${screen()}`,
      ),
    exitWithin: (withinMs) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), withinMs)));
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
  };
}

/** Kills every pty run still going (by the pid of its `script`, which hangs up its child). */
export async function killPty(): Promise<void> {
  for (const child of running) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      process.kill(child.pid, 'SIGKILL');
      await gone;
    }
    running.delete(child);
  }
}
