/**
 * Drives the terminal channel on a real pseudo-terminal (util-linux `script`
 * gives the child a TTY): raw-mode line editing, the prompt, approval answers
 * and Ctrl+C behave as a person at a keyboard sees them.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { visibleLines } from './virtual-screen.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const AGENT = fileURLToPath(new URL('./pty-echo.ts', import.meta.url));
const COLUMNS = 120;

// CSI sequences (colours, cursor moves, line clears) and carriage returns.
// eslint-disable-next-line no-control-regex -- removing escape sequences is the point
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\r/g;

/** The fake agent on a pseudo-terminal, with what a person would type and see. */
function startOnPty() {
  const command = `stty cols ${COLUMNS} rows 40; exec node --import tsx '${AGENT}'`;
  const child: ChildProcessWithoutNullStreams = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: '' },
  });
  let raw = '';
  child.stdout.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const screen = () => raw.replace(ANSI, '');
  return {
    child,
    exited,
    screen,
    /** The lines the terminal shows now: what was redrawn in place shows once. */
    visible: () => visibleLines(raw, COLUMNS),
    /** Keys as the terminal sends them: Enter is a carriage return. */
    type: (keys: string) => child.stdin.write(keys),
    /** Waits until `text` has appeared `count` times on screen. */
    async see(text: string, count = 1, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (screen().split(text).length - 1 < count) {
        if (Date.now() > deadline) throw new Error(`did not see ${JSON.stringify(text)} on screen:\n${screen()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** Longer than a message takes to settle and the prompt to come back. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

let running: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  if (running && running.exitCode === null) running.kill();
  running = undefined;
});

describe.skipIf(!hasScript)('TerminalChannel on a pseudo-terminal', () => {
  it('chats, answers an approval with y and quits on a double Ctrl+C', async () => {
    const pty = startOnPty();
    running = pty.child;
    await pty.see('Ctrl+D to quit');

    pty.type('hello there\r');
    await pty.see('… thinking');
    await pty.see('pincer: answer: hello there');

    pty.type('do it\r');
    await pty.see('Approve? [y]es / [n]o / [a]lways:');
    expect(pty.screen()).toContain('command: "ls"');
    pty.type('y\r');
    await pty.see('✅ Approved by tester');
    await pty.see('pincer: done');

    pty.type('\x03');
    await pty.see('pincer: command: stop');
    pty.type('\x03');
    expect(await pty.exited).toBe(0);
    expect(pty.screen()).toContain('bye');
  });

  it('shows a streamed answer once, rendered when finished, and a rewritten status line once', async () => {
    const pty = startOnPty();
    running = pty.child;
    await pty.see('Ctrl+D to quit');

    pty.type('stream\r');
    await pty.see('two');
    await settle();
    const answer = pty.visible();
    expect(answer.filter((line) => line.includes('A streamed')), answer.join('\n')).toEqual(['pincer: A streamed reply:']);
    expect(answer.join('\n')).not.toContain('**');
    expect(answer.join('\n')).toMatch(/\* one\n\s*\* two/);

    pty.type('slow\r');
    await pty.see('pincer: slow done');
    const status = pty.visible();
    const statusLines = status.filter((line) => line.includes('Running'));
    expect(statusLines, status.join('\n')).toEqual(['pincer: Running slow… 3 s']);
    expect(status[status.indexOf(statusLines[0]!) + 1]).toBe('pincer: slow done');
  });

  it('asks again after a typo at the prompt instead of taking it as a message', async () => {
    const pty = startOnPty();
    running = pty.child;
    await pty.see('Ctrl+D to quit');

    pty.type('do it\r');
    await pty.see('Approve? [y]es / [n]o / [a]lways:');
    pty.type('yy\r');
    await pty.see('"yy" is not an answer: type y, n or a');
    // Still asking: the hint is followed by the question, and the next letter answers it.
    expect(pty.visible().at(-1)).toBe('Approve? [y]es / [n]o / [a]lways:');
    pty.type('y\r');
    await pty.see('✅ Approved by tester');
    await pty.see('pincer: done');
    expect(pty.screen()).not.toContain('answer: yy');
  });

  it('ends on Ctrl+D at an empty prompt', async () => {
    const pty = startOnPty();
    running = pty.child;
    await pty.see('Ctrl+D to quit');
    pty.type('\x04');
    expect(await pty.exited).toBe(0);
    expect(pty.screen()).toContain('bye');
  });
});
