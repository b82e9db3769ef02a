import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { shellTool } from '../../src/tools/builtin/shell.js';
import type { Tool } from '../../src/tools/types.js';
import { textReply, toolCallReply } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { echoTool, fakeTool, makeContext, makeHarness, OWN_WORKSPACE, tempDir, workspacesAt, type Harness } from './support.js';

const call = (name: string, args: string, id: string) => ({ id, name, arguments: args });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let harness: Harness | undefined;
let rig: AppRig | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await rig?.close();
  rig = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A tool that waits `ms`, counting how many of its calls run at once. */
function waitTool(ms: number, stats = { running: 0, peak: 0 }): Tool {
  return fakeTool({
    name: 'wait',
    execute: async (_p, ctx) => {
      stats.running++;
      stats.peak = Math.max(stats.peak, stats.running);
      try {
        await sleep(ms);
        return `waited in ${ctx.threadKey}`;
      } finally {
        stats.running--;
      }
    },
  });
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return check();
}

describe('runBatch', () => {
  it('runs independent calls in parallel and keeps their order', async () => {
    harness = await makeHarness([waitTool(200), echoTool()]);
    const calls = [call('wait', '{}', 'a'), call('echo', '{"text":"second"}', 'b'), call('wait', '{}', 'c'), call('wait', '{}', 'd')];
    const started = performance.now();
    const results = await harness.pipeline.runBatch(calls, makeContext());
    const elapsed = performance.now() - started;
    expect(results.map((r) => r.call.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(results[1]!.content).toContain('second');
    // Three 200 ms calls one after another would take 600 ms.
    expect(elapsed).toBeLessThan(500);
  });

  it('bounds how many calls run at once (agent.toolConcurrency)', async () => {
    const stats = { running: 0, peak: 0 };
    harness = await makeHarness([waitTool(50, stats)], { config: { toolConcurrency: 2, maxOutputChars: 2000 } });
    const calls = Array.from({ length: 6 }, (_, i) => call('wait', '{}', String(i)));
    const results = await harness.pipeline.runBatch(calls, makeContext());
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    expect(stats.peak).toBe(2);
  });

  it('resolves calls that need approval or are rejected without running them', async () => {
    const ran: string[] = [];
    const record = (name: string, requirement: 'never' | 'always'): Tool =>
      fakeTool({
        name,
        requiresApproval: () => requirement,
        execute: async () => {
          ran.push(name);
          return name;
        },
      });
    harness = await makeHarness([record('free', 'never'), record('risky', 'always'), record('banned', 'never')]);
    await harness.policy.set('banned', 'global', 'disable', 'admin');
    const calls = [call('risky', '{}', '1'), call('free', '{}', '2'), call('banned', '{}', '3'), call('nope', '{}', '4')];
    const results = await harness.pipeline.runBatch(calls, makeContext());
    expect(results.map((r) => [r.call.id, r.status])).toEqual([
      ['1', 'needs_approval'],
      ['2', 'ok'],
      ['3', 'rejected'],
      ['4', 'error'],
    ]);
    expect(ran).toEqual(['free']);
  });

  it('skips calls that have not started when beforeStart says so', async () => {
    let newMessage = false;
    const first = fakeTool({
      name: 'first',
      execute: async () => {
        newMessage = true;
        return 'done';
      },
    });
    harness = await makeHarness([first, echoTool()], { config: { toolConcurrency: 1, maxOutputChars: 2000 } });
    const results = await harness.pipeline.runBatch(
      [call('first', '{}', '1'), call('echo', '{"text":"a"}', '2'), call('echo', '{"text":"b"}', '3')],
      makeContext(),
      { beforeStart: () => (newMessage ? 'Skipped: the user sent a new message.' : undefined) },
    );
    expect(results.map((r) => [r.status, r.content.startsWith('<tool_output') ? 'output' : r.content])).toEqual([
      ['ok', 'output'],
      ['skipped', 'Skipped: the user sent a new message.'],
      ['skipped', 'Skipped: the user sent a new message.'],
    ]);
  });

  it('aborting mid-batch stops running tools, kills the shell command and its children', async () => {
    const temp = tempDir('pincer-batch-');
    cleanups.push(temp.cleanup);
    const shell = shellTool({ workspaces: workspacesAt(temp.dir), timeoutMs: 30_000, maxOutputBytes: 10_000 });
    harness = await makeHarness([shell as Tool, waitTool(30_000)]);
    const controller = new AbortController();
    const ctx = makeContext({ signal: controller.signal });
    const command = 'echo $$ > shell.pid; sleep 30 & echo $! > child.pid; wait';
    const batch = harness.pipeline.runBatch(
      [call('shell', JSON.stringify({ command }), 's'), call('wait', '{}', 'w')],
      ctx,
      { approved: true },
    );
    const pidFile = join(temp.dir, OWN_WORKSPACE, 'child.pid');
    expect(await waitUntil(() => readFile(pidFile, 'utf8').then((t) => t.trim().length > 0, () => false), 10_000)).toBe(true);
    const shellPid = Number(await readFile(join(temp.dir, OWN_WORKSPACE, 'shell.pid'), 'utf8'));
    const childPid = Number(await readFile(pidFile, 'utf8'));
    expect(isGone(shellPid)).toBe(false);

    controller.abort();
    const results = await batch;
    expect(results.map((r) => [r.call.id, r.status, r.content])).toEqual([
      ['s', 'error', 'Error: the call to "shell" was cancelled.'],
      ['w', 'error', 'Error: the call to "wait" was cancelled.'],
    ]);
    expect(await waitUntil(() => isGone(shellPid) && isGone(childPid), 10_000)).toBe(true);
  });

  it('runs at most agent.maxToolCallsPerBatch calls of one model response; the others get an error result and do not run', async () => {
    const ran: number[] = [];
    const count = fakeTool({
      name: 'count',
      parameters: z.object({ n: z.number().int() }),
      execute: async ({ n }: { n: number }) => {
        ran.push(n);
        return `counted ${n}`;
      },
    });
    rig = await startAppRig({
      config: { agent: { maxToolCallsPerBatch: 3 } },
      tools: [count],
      responder: (request) => {
        const results = request.messages.filter((m) => m.role === 'tool').map((m) => String(m.content).replace(/\s+/g, ' '));
        if (results.length) return textReply(`results: ${results.join(' | ')}`);
        return toolCallReply(Array.from({ length: 5 }, (_, n) => ({ name: 'count', arguments: { n } })));
      },
    });
    const dm = testDm('owner');
    rig.platform.channel.userMessage({ chat: dm, sender: { id: 'owner', name: 'Ada' }, text: 'count to five' });
    const reply = await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).find((m) => m.text.startsWith('results: '))?.text, 10_000, 'the answer');
    expect(ran.sort()).toEqual([0, 1, 2]);
    const results = reply.slice('results: '.length).split(' | ');
    expect(results.slice(0, 3).every((result) => /counted \d/.test(result))).toBe(true);
    expect(results.slice(3)).toEqual([expect.stringMatching(/^Error: too many calls in one batch, at most 3/), expect.stringMatching(/^Error: too many calls in one batch, at most 3/)]);
  });
});
