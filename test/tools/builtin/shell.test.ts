import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shellTool } from '../../../src/tools/builtin/shell.js';
import { makeContext, OWN_WORKSPACE, tempDir, workspacesAt } from '../support.js';

let root: string;
let workspace: string;
let cleanup: () => void;
beforeEach(() => {
  const temp = tempDir('pincer-shell-');
  root = join(temp.dir, 'ws');
  workspace = join(root, OWN_WORKSPACE);
  cleanup = temp.cleanup;
});
afterEach(() => cleanup());

const run = (command: string, options: { timeoutMs?: number; maxOutputBytes?: number } = {}, signal?: AbortSignal) =>
  shellTool({ workspaces: workspacesAt(root), timeoutMs: 10_000, maxOutputBytes: 10_000, ...options }).execute(
    { command },
    makeContext(signal ? { signal } : {}),
  );

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return check();
}

describe('shell tool', () => {
  it('returns the exit code and output, running in the workspace', async () => {
    expect(await run('echo hello; exit 3')).toBe('exit code: 3\nhello\n');
    expect(await run('pwd')).toBe(`exit code: 0\n${realpathSync(workspace)}\n`);
    expect(await run('echo oops >&2')).toBe('exit code: 0\noops\n');
    expect(await run('true')).toBe('exit code: 0\n(no output)');
  });

  it("does not pass pincer's environment (and its credentials) to the command", async () => {
    process.env.PINCER_TEST_CREDENTIAL = 'do-not-leak';
    try {
      expect(await run('echo "[$PINCER_TEST_CREDENTIAL]"')).toBe('exit code: 0\n[]\n');
    } finally {
      delete process.env.PINCER_TEST_CREDENTIAL;
    }
  });

  it('kills the command and everything it started at the timeout', async () => {
    const started = Date.now();
    await expect(run('sleep 30 & echo $! > bg.pid; echo started; wait', { timeoutMs: 500 })).rejects.toThrow(
      'the command timed out after 0.5 s and was killed.\nstarted\n',
    );
    expect(Date.now() - started).toBeLessThan(5000);
    const bg = Number(readFileSync(join(workspace, 'bg.pid'), 'utf8'));
    expect(await eventually(() => isGone(bg))).toBe(true);
  });

  it('kills background processes the command leaves behind', async () => {
    const out = await run('sleep 30 > /dev/null 2>&1 & echo $!');
    const bg = Number(out.split('\n')[1]);
    expect(bg).toBeGreaterThan(0);
    expect(await eventually(() => isGone(bg))).toBe(true);
  });

  it('stops when the turn is stopped', async () => {
    const controller = new AbortController();
    const running = run('echo $$ > sh.pid; sleep 30', {}, controller.signal);
    expect(await eventually(() => { try { return readFileSync(join(workspace, 'sh.pid'), 'utf8').trim() !== ''; } catch { return false; } })).toBe(true);
    controller.abort();
    await expect(running).rejects.toThrow('the command was stopped.');
    expect(await eventually(() => isGone(Number(readFileSync(join(workspace, 'sh.pid'), 'utf8'))))).toBe(true);
  });

  it('keeps at most tools.shell.maxOutputBytes of output', async () => {
    const out = await run('head -c 5000 /dev/zero | tr "\\0" a', { maxOutputBytes: 100 });
    expect(out).toBe(`exit code: 0\n${'a'.repeat(100)}\n[4900 more bytes of output not kept]`);
  });

  it('always needs approval', () => {
    const tool = shellTool({ workspaces: workspacesAt(root), timeoutMs: 1000, maxOutputBytes: 100 });
    expect(tool.requiresApproval({ command: 'ls' })).toBe('always');
    expect(tool.describe!({ command: 'ls -la' })).toBe('Run the shell command: ls -la');
  });
});
