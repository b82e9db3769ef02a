/**
 * The built product on a pseudo-terminal (util-linux `script` gives it a TTY)
 * with only the model configured: the terminal channel starts by itself, a
 * user chats, answers an approval with `y`, and quits with Ctrl+D.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../fakes/llm/server.js';
import { ensureBuilt, MAIN } from './build.js';
import { replyTo, respond } from './model.js';
import { cleanUp, tempDir, waitUntil } from './pincer.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const API_KEY = 'sk-e2e-terminal-0123456789SECRET';

// CSI sequences (colours, cursor moves, line clears) and carriage returns.
// eslint-disable-next-line no-control-regex -- removing escape sequences is the point
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\r/g;

/** A value quoted for sh. */
function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

let llm: FakeLlm | undefined;
let pty: ChildProcessWithoutNullStreams | undefined;

beforeAll(() => ensureBuilt(), 130_000);

afterEach(async () => {
  if (pty?.pid !== undefined && pty.exitCode === null && pty.signalCode === null) {
    const gone = new Promise((resolve) => pty!.once('exit', resolve));
    // The pty closes with `script`, which hangs up its child.
    process.kill(pty.pid, 'SIGKILL');
    await gone;
  }
  pty = undefined;
  await llm?.close();
  llm = undefined;
  await cleanUp();
});

/** `node dist/main.js` under a pty with exactly `env`, and what a user sees on it. */
function startOnPty(env: Record<string, string>) {
  const assignments = Object.entries(env).map(([key, value]) => `${key}=${quote(value)}`);
  const cwd = tempDir('pincer-e2e-cwd-');
  const command = `stty cols 120 rows 40; exec env -i ${assignments.join(' ')} ${quote(process.execPath)} ${quote(MAIN)}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: env.HOME ?? '/tmp', TERM: 'xterm-256color' },
    detached: false,
  });
  pty = child;
  let raw = '';
  child.stdout.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const screen = () => raw.replace(ANSI, '');
  return {
    exited,
    screen,
    /** Keys as the terminal sends them: Enter is a carriage return. */
    type: (keys: string) => child.stdin.write(keys),
    /** Waits until `text` has appeared `count` times on screen. */
    see: (text: string, count = 1, timeoutMs = 15_000) =>
      waitUntil(
        () => screen().split(text).length - 1 >= count,
        timeoutMs,
        () => `${JSON.stringify(text)} on screen:\n${screen()}`,
      ),
  };
}

describe.skipIf(!hasScript)('terminal channel on a pseudo-terminal', () => {
  it('chats, runs an approved files_write after y, and ends with exit code 0 on Ctrl+D', async () => {
    llm = await startFakeLlm({ responder: respond, apiKey: API_KEY });
    const dataDir = tempDir();
    const terminal = startOnPty({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      TERM: 'xterm-256color',
      PINCER_DATA_DIR: dataDir,
      PINCER_LOG_LEVEL: 'info',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: API_KEY,
      PINCER_MODEL: 'fake-model',
    });
    await terminal.see('Ctrl+D to quit');

    terminal.type('hello terminal\r');
    await terminal.see(replyTo('hello terminal'));

    terminal.type('please write a note\r');
    await terminal.see('Approve? [y]es / [n]o / [a]lways:');
    expect(terminal.screen()).toContain('files_write');
    // The person at the keyboard (terminal:owner) has a workspace of their own.
    const note = join(dataDir, 'workspace', 'users', 'terminal', 'owner', 'note.txt');
    expect(existsSync(note)).toBe(false);
    terminal.type('y\r');
    await terminal.see('Wrote 2 bytes to note.txt');
    expect(readFileSync(note, 'utf8')).toBe('hi');

    terminal.type('\x04');
    const code = await Promise.race([
      terminal.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 8_000)),
    ]);
    expect(code, terminal.screen()).toBe(0);
    expect(terminal.screen()).not.toContain(API_KEY);
  }, 45_000);

  it('keeps log lines off the screen, shows a streamed answer once, re-asks after a typo and shows a slow approved tool\'s progress', async () => {
    llm = await startFakeLlm({ responder: respond, apiKey: API_KEY });
    const slow = createServer((_request, response) => setTimeout(() => response.end('slow page'), 3_500));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/page`;
    const dataDir = tempDir();
    const configFile = join(tempDir(), 'pincer.yaml');
    writeFileSync(configFile, 'tools:\n  http:\n    allowHosts: ["127.0.0.1"]\n');
    try {
      const terminal = startOnPty({
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        TERM: 'xterm-256color',
        PINCER_DATA_DIR: dataDir,
        PINCER_CONFIG: configFile,
        PINCER_LOG_LEVEL: 'debug',
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: API_KEY,
        PINCER_MODEL: 'fake-model',
      });
      await terminal.see('Ctrl+D to quit');
      await terminal.see('logs go to');

      terminal.type('stream please\r');
      await terminal.see('Streamed sentence 8 of the answer.');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(terminal.screen().split("Streamed sentence 1 of").length - 1, JSON.stringify(terminal.screen())).toBe(1);

      terminal.type(`fetch ${url}\r`);
      await terminal.see('Approve? [y]es / [n]o / [a]lways:');
      terminal.type('yy\r');
      await terminal.see('"yy" is not an answer');
      terminal.type('y\r');
      await waitUntil(() => /Running .?http_fetch.?… \d+ s/.test(terminal.screen()), 10_000, () => `the progress line on screen:\n${terminal.screen()}`);
      await terminal.see('Done: ');

      // Log lines went to the file, not to the screen.
      const screen = terminal.screen();
      expect(screen).not.toMatch(/"level":|\bINFO\b|\bDEBUG\b|channel started/);
      const log = readFileSync(join(dataDir, 'logs', 'pincer.log'), 'utf8');
      expect(log).toContain('channel started');
      expect(log).not.toContain(API_KEY);
      terminal.type('\x04');
      expect(await terminal.exited).toBe(0);
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 60_000);
});

