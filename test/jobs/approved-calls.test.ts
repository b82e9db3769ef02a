/**
 * A job's approved call and its conversation, through the whole app: the call
 * its owner approved runs in the job's run, so `/jobs cancel` stops it and the
 * job's time limit bounds it; and a step of a job writes its new messages, not
 * its whole conversation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { z } from 'zod';
import type { Tool } from '../../src/tools/types.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import type { JobRecord } from '../../src/jobs/job.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

function isJobRequest(request: FakeLlmRequest): boolean {
  return /background job/.test(String(request.messages[0]?.content ?? ''));
}

function toolResults(request: FakeLlmRequest): string[] {
  return request.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

/** The chat side creates the job ("job <goal> [tools a,b] [timeout minutes]"); the job side is `jobModel`. */
function model(jobModel: (request: FakeLlmRequest) => FakeLlmEntry) {
  return (request: FakeLlmRequest): FakeLlmEntry => {
    if (isJobRequest(request)) return jobModel(request);
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply('chat: job created');
    const asked = /job (?<goal>\S+)(?: tools (?<tools>\S+))?(?: timeout (?<timeout>\S+))?/.exec(String(last.content))?.groups;
    if (!asked) return textReply('echo');
    const args: Record<string, unknown> = { title: `Job ${asked.goal}`, goal: asked.goal };
    if (asked.tools) args.tools = asked.tools.split(',');
    if (asked.timeout) args.timeoutMinutes = Number(asked.timeout);
    return toolCallReply([{ name: 'create_job', arguments: args }]);
  };
}

/** What the `wait_for` tool saw. */
class WaitLog {
  started = 0;
  aborted = 0;
  finished = 0;
}

/** A tool that changes things (a job asks its owner for it) and waits until its time is up or its signal aborts. */
function waitTool(log: WaitLog): Tool {
  const parameters = z.object({ ms: z.number() });
  const tool: Tool<typeof parameters> = {
    name: 'wait_for',
    description: 'Waits, then changes something.',
    parameters,
    readOnly: false,
    requiresApproval: () => 'unlessAutoApproved',
    timeoutMs: 120_000,
    execute: (params, ctx) => {
      log.started += 1;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          log.finished += 1;
          resolve(`waited ${params.ms} ms`);
        }, params.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          log.aborted += 1;
          reject(new Error('aborted'));
        });
      });
    },
  };
  return tool as unknown as Tool;
}

/** A job that asks to run `wait_for` for a minute, then reports what it got. */
const waitingJob = model((request) => {
  const results = toolResults(request);
  if (!results.length) return toolCallReply([{ name: 'wait_for', arguments: { ms: 60_000 } }]);
  return textReply(`DONE: ${results.at(-1)!}`);
});

async function approveNext(index: number): Promise<void> {
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[index], 5_000, `approval prompt #${index + 1}`);
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
}

async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; jobs: ${JSON.stringify((await rig!.app.services.jobs.list()).map((job) => [job.id, job.state, job.result]))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function jobOf(state: JobRecord['state'], timeoutMs = 10_000): Promise<JobRecord> {
  return until(async () => (await rig!.app.services.jobs.list()).find((job) => job.state === state), timeoutMs, `a job in state ${state}`);
}

/** Every write the app's store makes from now on, by raw key, with the value as JSON. */
function recordWrites(): { key: string; json: string }[] {
  const writes: { key: string; json: string }[] = [];
  type Entry = { key: string; value: unknown; ttl?: number };
  const keyv = (rig!.app.store as unknown as { keyv: { set(key: string, value: unknown, ttl?: number): Promise<unknown>; setMany(entries: Entry[]): Promise<unknown> } }).keyv;
  const set = keyv.set.bind(keyv);
  const setMany = keyv.setMany.bind(keyv);
  keyv.set = (key, value, ttl) => {
    writes.push({ key, json: JSON.stringify(value) });
    return set(key, value, ttl);
  };
  keyv.setMany = (entries) => {
    for (const { key, value } of entries) writes.push({ key, json: JSON.stringify(value) });
    return setMany(entries);
  };
  return writes;
}

describe('a job\'s approved call', () => {
  it('/jobs cancel while it runs stops the call: the tool sees its signal aborted and the job ends cancelled', async () => {
    const log = new WaitLog();
    rig = await startAppRig({ tools: [waitTool(log)], responder: waitingJob });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job wait' });
    await approveNext(0);
    await approveNext(1);
    await rig.platform.waitFor(() => log.started === 1, 5_000, 'the approved call');
    const job = (await rig.app.services.jobs.list())[0]!;
    const asked = Date.now();
    rig.platform.channel.command({ chat: dm, sender: ada, name: 'jobs', args: `cancel ${job.id}` });
    const cancelled = await jobOf('cancelled', 2_000);
    expect(cancelled.id).toBe(job.id);
    await rig.platform.waitFor(() => log.aborted === 1, 2_000, 'the tool to see its signal aborted');
    expect(Date.now() - asked).toBeLessThan(2_000);
    expect(log.finished).toBe(0);
  });

  it('is bounded by the job\'s time: a call that hangs past it is stopped, and the model reads that it ran out of time', async () => {
    const log = new WaitLog();
    rig = await startAppRig({ tools: [waitTool(log)], responder: waitingJob, config: { jobs: { maxRepairAttempts: 1 } } });
    // 0.01 minutes: 600 ms for each run of the job.
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job hang timeout 0.01' });
    await approveNext(0);
    await approveNext(1);
    await rig.platform.waitFor(() => log.started === 1, 5_000, 'the approved call');
    const done = await jobOf('completed', 5_000);
    expect(log.aborted).toBe(1);
    expect(log.finished).toBe(0);
    expect(done.result).toMatch(/interrupted \(the job ran out of time\); it was not run again/);
  });
});

describe('a job\'s conversation', () => {
  it('a step writes its new messages to the job\'s log, not the whole conversation, and the record stays small', async () => {
    const expressions = ['11*11', '12*12', '13*13', '14*14', '15*15'];
    rig = await startAppRig({
      responder: model((request) => {
        const results = toolResults(request);
        const next = expressions[results.length];
        return next ? toolCallReply([{ name: 'calculator', arguments: { expression: next } }]) : textReply(`DONE: ${results.map((result) => /= (\d+)/.exec(result)?.[1]).join(' ')}`);
      }),
    });
    const writes = recordWrites();
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job squares tools calculator' });
    await approveNext(0);
    const done = await jobOf('completed');
    expect(done.result).toBe('121 144 169 196 225');

    // The record never carries the conversation.
    const recordWrites_ = writes.filter((write) => write.key === `jobs:${done.id}`);
    expect(recordWrites_.length).toBeGreaterThan(5);
    for (const write of recordWrites_) expect(write.json).not.toMatch(/= 121|Goal: squares/);

    // The conversation's log is appended: one generation of segments, its head counting up step by step.
    const segments = writes.filter((write) => write.key.startsWith(`thread-messages:job:${done.id}:`));
    const generations = new Set(segments.map((write) => write.key.split(':').at(-2)));
    expect(generations.size).toBe(1);
    const counts = writes.filter((write) => write.key === `thread-head:job:${done.id}`).map((write) => (JSON.parse(write.json) as { data: { count: number } }).data.count);
    expect(counts.length).toBeGreaterThanOrEqual(expressions.length);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    const conversation = await rig.app.services.jobs.conversation(done.id);
    expect(counts.at(-1)).toBe(conversation.length);
    const results = conversation.filter((message) => message.role === 'tool').map((message) => /= (\d+)/.exec(String(message.content))?.[1]);
    expect(results).toEqual(['121', '144', '169', '196', '225']);
  });
});
