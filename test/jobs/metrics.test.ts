/**
 * A background job's model calls and tool calls in `/metrics`, through the
 * whole app: its planning call, its plan's steps, its completion check and its
 * loop steps count their requests, tokens and cost like chat turns do; a call
 * its owner approved counts as a tool call; and a planning or completion-check
 * reply that wraps its answer in a reasoning block is read without the block.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { freePort } from '../support/ports.js';
import { testDm } from '../support/test-channel.js';
import type { JobRecord } from '../../src/jobs/job.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);
/** A chat reply costs nothing; a job's call costs $0.60 (1,000 output tokens at $600 per million). */
const FREE = { usage: { prompt_tokens: 50, completion_tokens: 0 } };
const PRICED = { usage: { prompt_tokens: 50, completion_tokens: 1_000 } };
const PRICES = { llm: { prices: { 'fake-model': { input: 0, output: 600 } } } };

/** What kind of job request this is; undefined for a chat request. */
function jobCallOf(request: FakeLlmRequest): 'planning' | 'check' | 'step' | undefined {
  const system = String(request.messages[0]?.content ?? '');
  if (system.startsWith('You plan background jobs')) return 'planning';
  if (!/background job/.test(system)) return undefined;
  return /The planned steps have run/.test(String(request.messages.at(-1)?.content ?? '')) ? 'check' : 'step';
}

/** The chat side: "job <goal>" or "planjob <goal>" creates a job with the calculator; the job side is `jobModel`. */
function model(jobModel: (kind: 'planning' | 'check' | 'step', request: FakeLlmRequest) => FakeLlmEntry) {
  return (request: FakeLlmRequest): FakeLlmEntry => {
    const kind = jobCallOf(request);
    if (kind) return jobModel(kind, request);
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply('job created', FREE);
    const asked = /(plan)?job (\S+)$/.exec(String(last.content));
    if (!asked) return textReply('hi', FREE);
    return toolCallReply([{ name: 'create_job', arguments: { title: `Job ${asked[2]}`, goal: asked[2], tools: ['calculator'], ...(asked[1] ? { plan: true } : {}) } }], FREE);
  };
}

async function approveNext(index: number): Promise<void> {
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[index], 5_000, `approval prompt #${index + 1}`);
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
}

/** Polls the job store until a job has ended. */
async function endedJob(): Promise<JobRecord> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ended = (await rig!.app.services.jobs.list()).find((job) => job.state === 'failed' || job.state === 'completed');
    if (ended) return ended;
    if (Date.now() > deadline) throw new Error('timed out waiting for the job to end');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function metrics(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** The value of one sample line, such as `pincer_model_cost_usd_total`. */
function sample(body: string, name: string): number {
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

/** The calculator expressions a request's plan steps ran, from their tool results. */
function resultsOf(request: FakeLlmRequest): string {
  return request.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)).join(' ');
}

describe('a job in /metrics', () => {
  it('counts its planning call, its plan steps, its completion check and its loop step: requests, tokens and cost', async () => {
    const port = await freePort();
    rig = await startAppRig({
      config: { ...PRICES, http: { port } },
      responder: model((kind) => {
        if (kind === 'planning') return textReply(JSON.stringify({ steps: [{ tool: 'calculator', arguments: { expression: '2+3' } }, { tool: 'calculator', arguments: { expression: '4*5' } }] }), PRICED);
        if (kind === 'check') return textReply('Not done yet: one more look.', PRICED);
        return textReply('DONE: 5 and 20', PRICED);
      }),
    });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'planjob sums' });
    await approveNext(0);
    expect((await endedJob()).result).toBe('5 and 20');
    const body = await metrics(port);
    expect(body).toMatch(/pincer_model_requests_total\{purpose="planning",error="none"\} 1\n/);
    expect(body).toMatch(/pincer_model_requests_total\{purpose="completion_check",error="none"\} 1\n/);
    expect(body).toMatch(/pincer_model_requests_total\{purpose="job_step",error="none"\} 1\n/);
    // The three job calls are all the cost and all the output tokens: the chat replies were free.
    expect(sample(body, 'pincer_model_cost_usd_total')).toBeCloseTo(1.8, 6);
    expect(sample(body, 'pincer_model_tokens_total{direction="output"}')).toBe(3_000);
    // The plan's two steps ran through the tools like any call, and count as tool calls.
    expect(body).toMatch(/pincer_tool_calls_total\{tool="calculator",status="ok"\} 2\n/);
  });

  it('counts a call its owner approved as a tool call, once, beside the question it asked', async () => {
    const port = await freePort();
    const log = new ToolLog();
    rig = await startAppRig({
      tools: scenarioTools(log),
      config: { http: { port } },
      responder: model((_kind, request) => {
        const results = request.messages.filter((m) => m.role === 'tool');
        if (!results.length) return toolCallReply([{ name: 'note_write', arguments: { text: 'first' } }]);
        return textReply('DONE: noted');
      }),
    });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job notes' });
    await approveNext(0);
    const question = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[1], 5_000, "the job's question");
    rig.platform.channel.press(question.prompt.id, 'approve', ada);
    expect((await endedJob()).state).toBe('completed');
    expect(log.notes).toEqual(['first']);
    const body = await metrics(port);
    expect(body).toMatch(/pincer_tool_calls_total\{tool="note_write",status="needs_approval"\} 1\n/);
    expect(body).toMatch(/pincer_tool_calls_total\{tool="note_write",status="ok"\} 1\n/);
    // The chat's create_job: asked once, then run once.
    expect(body).toMatch(/pincer_tool_calls_total\{tool="create_job",status="ok"\} 1\n/);
  });
});

describe("a job's planning and completion check", () => {
  it('read the answer after a reasoning block, not the draft inside it', async () => {
    rig = await startAppRig({
      responder: model((kind, request) => {
        if (kind === 'planning') {
          const draft = JSON.stringify({ steps: [{ tool: 'calculator', arguments: { expression: '1+1' } }] });
          const plan = JSON.stringify({ steps: [{ tool: 'calculator', arguments: { expression: '2+3' } }] });
          return textReply(`<think>A first idea: ${draft}. No, the goal needs 2+3.</think>\n${plan}`);
        }
        if (kind === 'check') return textReply(/2\+3 = 5/.test(resultsOf(request)) ? '<think>The result is there, so the goal is reached.</think>\nDONE: the sum is 5' : 'Not done: wrong sum.');
        return textReply('DONE: finished by the loop');
      }),
    });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'planjob sum' });
    await approveNext(0);
    const job = await endedJob();
    expect(job.result).toBe('the sum is 5');
    expect(job.planState).toBe('done');
    expect(job.planSteps?.map((step) => step.arguments)).toEqual([{ expression: '2+3' }]);
    // The check's answer goes into the job's conversation without its reasoning.
    const conversation = await rig!.app.services.jobs.conversation(job.id);
    expect(conversation.some((m) => m.role === 'assistant' && /<think>/.test(String(m.content)))).toBe(false);
  });
});
