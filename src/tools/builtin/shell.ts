/**
 * The `shell` tool: runs a command with `/bin/sh -c` in the caller's workspace
 * folder (a person's own in a DM, the conversation's in a group).
 * Registered only when `tools.shell.enabled` is true, and every call needs the
 * user's approval. The command runs in its own process group, so a timeout or
 * a stopped turn kills it together with everything it started.
 */
import { spawn } from 'node:child_process';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { WorkspaceView } from './lib/workspace-view.js';
import type { WorkspaceSettings } from './lib/workspaces.js';

const parameters = z.object({
  command: z.string().min(1).max(10_000).describe('Shell command, run with /bin/sh -c in the workspace folder'),
});

/** Settings of the shell tool (config `tools.shell` plus where the workspaces are). */
export interface ShellOptions {
  workspaces: WorkspaceSettings;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** Variables passed to the command: nothing from pincer's own environment, which holds its credentials. */
const SAFE_ENV_KEYS = ['PATH', 'LANG', 'LC_ALL', 'TZ'];

/** Creates the shell tool. */
export function shellTool(options: ShellOptions): Tool<typeof parameters> {
  return {
    name: 'shell',
    description: 'Run a shell command (/bin/sh -c) in the workspace folder and return its exit code and output. Every call needs approval.',
    parameters,
    readOnly: false,
    requiresApproval: () => 'always',
    timeoutMs: options.timeoutMs + 5_000,
    describe: ({ command }) => `Run the shell command: ${command.length > 200 ? `${command.slice(0, 200)}…` : command}`,
    async execute({ command }, ctx) {
      const cwd = await new WorkspaceView(options.workspaces, ctx).ownRoot();
      return runCommand(command, cwd, options, ctx.signal);
    },
  };
}

function runCommand(command: string, cwd: string, options: ShellOptions, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: safeEnv(cwd) });
    const output = boundedOutput(options.maxOutputBytes);
    let ended: 'timeout' | 'aborted' | undefined;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const stop = (why: 'timeout' | 'aborted') => {
      ended ??= why;
      killGroup();
    };
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    const onAbort = () => stop('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    child.stdout.on('data', output.add);
    child.stderr.on('data', output.add);
    // Background jobs the command left behind are not allowed to outlive it.
    child.once('exit', killGroup);
    child.once('error', (error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(new ToolError(`could not start /bin/sh: ${error.message}`));
    });
    child.once('close', (code, killedBy) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (ended === 'timeout') reject(new ToolError(`the command timed out after ${options.timeoutMs / 1000} s and was killed.\n${output.text()}`));
      else if (ended === 'aborted') reject(new ToolError('the command was stopped.'));
      else resolve(`exit code: ${code ?? `killed by ${killedBy}`}\n${output.text() || '(no output)'}`);
    });
  });
}

function safeEnv(cwd: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: cwd, TERM: 'dumb' };
  for (const key of SAFE_ENV_KEYS) if (process.env[key] !== undefined) env[key] = process.env[key];
  return env;
}

/** Collects stdout and stderr interleaved, keeping at most `maxBytes`. */
function boundedOutput(maxBytes: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let dropped = 0;
  return {
    add: (chunk: Buffer) => {
      const room = maxBytes - size;
      if (room <= 0) {
        dropped += chunk.length;
        return;
      }
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      dropped += Math.max(0, chunk.length - room);
      size += Math.min(chunk.length, room);
    },
    text: () => Buffer.concat(chunks).toString('utf8') + (dropped ? `\n[${dropped} more bytes of output not kept]` : ''),
  };
}
