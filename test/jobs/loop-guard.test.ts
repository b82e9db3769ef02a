/**
 * The loop guards stopping a job (SPEC section 4, config `agent.loopGuards`):
 * a job whose model keeps calling a tool that keeps failing is stopped by the
 * loop detectors after a few calls, not after its 30 steps, and its owner reads
 * why in the job's failure report.
 */
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { ToolError } from '../../src/errors.js';
import type { Tool } from '../../src/tools/types.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

/** `fetch_page`, which fails every time (the site is down), counting its runs. */
function downSite(runs: number[]): Tool {
  const parameters = z.object({ page: z.number() });
  const tool: Tool<typeof parameters> = {
    name: 'fetch_page',
    description: 'Fetches one page of the report.',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    async execute(params) {
      runs.push(params.page);
      throw new ToolError('the server answered 503 Service Unavailable');
    },
  };
  return tool as unknown as Tool;
}

function isJobRequest(request: FakeLlmRequest): boolean {
  return /background job/.test(String(request.messages[0]?.content ?? ''));
}

/**
 * The chat side: "job" creates a job allowed to use fetch_page. The job side
 * calls fetch_page whatever it is told: the same page, or the next one each time.
 */
function model(pages: 'same' | 'next') {
  return (request: FakeLlmRequest): FakeLlmEntry => {
    if (isJobRequest(request)) {
      const calls = request.messages.filter((m) => m.role === 'tool').length;
      return toolCallReply([{ name: 'fetch_page', arguments: { page: pages === 'same' ? 1 : calls + 1 } }]);
    }
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply('chat: created');
    return toolCallReply([{ name: 'create_job', arguments: { title: 'Report', goal: 'collect the report', tools: ['fetch_page'] } }]);
  };
}

async function failureReport(): Promise<string> {
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[0], 5_000, 'the approval prompt');
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
  return rig!.platform.waitFor(() => rig!.platform.messagesIn(dm).map((m) => m.text).find((t) => /^❌ Job \S+ "Report" failed/.test(t)), 15_000, 'the failure report');
}

function jobCalls(): number {
  return rig!.llm.requests.filter(isJobRequest).length;
}

describe('the loop guards stop a job', () => {
  it('a tool failing again and again, each time with other arguments: stopped by agent.loopGuards.consecutiveFailures, with a report', async () => {
    const runs: number[] = [];
    rig = await startAppRig({ responder: model('next'), tools: [downSite(runs)], config: { agent: { loopGuards: { consecutiveFailures: 3 } } } });
    const guards: Array<{ thread: string; action: string; guard: string }> = [];
    rig.app.services.events.on('guard', ({ thread, action, guard }) => guards.push({ thread, action, guard }));
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job' });
    const report = await failureReport();
    expect(report).toMatch(/failed: I kept repeating myself: 4 failing tool calls in a row \(last: fetch_page: .*503 Service Unavailable\)\.$/);
    // Each step of the ladder is an event of the job's thread: the warning, then the stop.
    expect(guards.map((fired) => fired.action)).toEqual(['warning', 'stopped']);
    expect(guards.every((fired) => /^job:/.test(fired.thread) && fired.guard === 'failures')).toBe(true);
    // The first streak of 3 is a note to the model, the next one stops the job: far from its 30 steps.
    expect(runs).toEqual([1, 2, 3, 4]);
    expect(jobCalls()).toBe(4);
    const [job] = await rig.app.services.jobs.list();
    expect(job).toMatchObject({ state: 'failed', result: expect.stringMatching(/^I kept repeating myself/) });
  });

  it('the same failing call again and again, the forced answer ignored: stopped with a report after five runs, not at maxIterations', async () => {
    const runs: number[] = [];
    rig = await startAppRig({ responder: model('same'), tools: [downSite(runs)] });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job' });
    const report = await failureReport();
    expect(report).toMatch(/failed: I kept repeating myself: 5 failing tool calls in a row \(last: fetch_page: .*503 Service Unavailable\)\.$/);
    // Four identical failures, then an answer without tools (the model's calls were not run), then
    // the fifth failure in a row stops the job: six model calls of its 30 steps.
    expect(runs).toEqual([1, 1, 1, 1, 1]);
    expect(rig.llm.requests.filter(isJobRequest).map((r) => Boolean(r.tools?.some((t) => t.function.name === 'fetch_page')))).toEqual([true, true, true, true, false, true]);
    const [job] = await rig.app.services.jobs.list();
    expect(job?.state).toBe('failed');
  });
});
