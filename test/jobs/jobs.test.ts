/**
 * Background jobs through the whole app: a person asks in a DM, the model
 * calls `create_job` (approved), the job runs on its own against the fake
 * model, shows its progress and posts its result in the DM. Also: refused in a
 * group, a call outside the job's tools asks its owner, cancel aborts a hanging
 * model request, "not done yet" is not done, a timeout goes to `stuck` and is
 * repaired, then fails, and a restart resumes a running job without running a
 * finished tool call again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hang, textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { Redis } from 'ioredis';
import { startAppRig, type AppRig, type AppRigOptions } from '../support/app-rig.js';
import { testDm, testGroup } from '../support/test-channel.js';
import { REPEATED_ANSWER_NOTICE } from '../../src/engine/guards/notices.js';
import type { JobRecord } from '../../src/jobs/job.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The engines the suite runs on: in this process, and BullMQ when a Redis is there to use. */
interface Engine {
  name: string;
  storeUrl?: string;
  skip?: string;
}
const ENGINES: Engine[] = [
  { name: 'the in-process engine' },
  process.env.PINCER_TEST_REDIS_URL
    ? { name: 'BullMQ on Redis', storeUrl: redisDb(process.env.PINCER_TEST_REDIS_URL, 5) }
    : { name: 'BullMQ on Redis', skip: 'PINCER_TEST_REDIS_URL is not set' },
];

/** The URL of database `db` on the test Redis: the jobs suite has one of its own, emptied before each test. */
function redisDb(base: string, db: number): string {
  const url = new URL(base);
  url.pathname = `/${db}`;
  return url.toString();
}

/** Starts the app rig on `engine`'s store (a Redis one is emptied first). */
async function startRig(engine: Engine, options: AppRigOptions): Promise<AppRig> {
  if (engine.storeUrl) {
    const redis = new Redis(engine.storeUrl);
    await redis.flushdb();
    redis.disconnect();
  }
  return startAppRig({ ...options, config: { ...options.config, ...(engine.storeUrl ? { storeUrl: engine.storeUrl } : {}) } });
}

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

/** The job's goal, from its system prompt (or its planning request); undefined for a chat request. */
function goalOf(request: FakeLlmRequest): string | undefined {
  const system = String(request.messages[0]?.content ?? '');
  if (system.startsWith('You plan background jobs')) return /Goal: (\S+)/.exec(String(request.messages[1]?.content ?? ''))?.[1];
  const request_ = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
  return /background job/.exec(system) ? /^Goal: (.*)$/m.exec(request_)?.[1] : undefined;
}

/** Whether a job request is its planning call. */
function isPlanning(request: FakeLlmRequest): boolean {
  return String(request.messages[0]?.content ?? '').startsWith('You plan background jobs');
}

/** Tool results so far in the request. */
function toolResults(request: FakeLlmRequest): string[] {
  return request.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

/**
 * The chat side: "job <goal> [tools a,b]" creates a job; after the tool, the
 * model says what it got. The job side is `jobModel`.
 */
function model(jobModel: (goal: string, request: FakeLlmRequest) => FakeLlmEntry) {
  return (request: FakeLlmRequest): FakeLlmEntry => {
    const goal = goalOf(request);
    if (goal !== undefined) return jobModel(goal, request);
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply(`chat: ${String(last.content).replace(/\s+/g, ' ').slice(0, 300)}`);
    const text = String(last.content).replace(/^\[[^\]]*\]\s*/, '');
    const asked = /^(?<plan>plan)?job (?<goal>\S+)(?: tools (?<tools>\S+))?(?: timeout (?<timeout>\S+))?/.exec(text)?.groups;
    if (!asked) return textReply(`echo: ${text}`);
    const args: Record<string, unknown> = { title: `Job ${asked.goal}`, goal: asked.goal };
    if (asked.plan) args.plan = true;
    if (asked.tools) args.tools = asked.tools.split(',');
    if (asked.timeout) args.timeoutMinutes = Number(asked.timeout);
    return toolCallReply([{ name: 'create_job', arguments: args }]);
  };
}

async function approveNext(index: number): Promise<void> {
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[index], 5_000, `approval prompt #${index + 1}`);
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
}

/** Polls `probe` until it gives a value. */
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

function texts(): string[] {
  return rig!.platform.messagesIn(dm).map((m) => m.text);
}

for (const engine of ENGINES) {
  describe.skipIf(Boolean(engine.skip))(`jobs on ${engine.name}${engine.skip ? ` (skipped: ${engine.skip})` : ''}`, () => {
    describe('planned jobs', () => {
      it('runs the plan\'s steps without model calls, then one completion check', async () => {
        rig = await startRig(engine, {
          responder: model((goal, request) => {
            if (isPlanning(request)) {
              return textReply(JSON.stringify({ steps: [{ tool: 'calculator', arguments: { expression: '2+3' }, why: 'first' }, { tool: 'calculator', arguments: { expression: '4*5' } }] }));
            }
            const last = String(request.messages.at(-1)?.content ?? '');
            if (/The planned steps have run/.test(last)) {
              const results = toolResults(request).join(' ');
              return textReply(goal === 'sums' && /2\+3 = 5/.test(results) && /4\*5 = 20/.test(results) ? 'DONE: 5 and 20' : 'Something remains.');
            }
            return textReply('DONE: finished by the loop');
          }),
        });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'planjob sums tools calculator' });
        await approveNext(0);
        const done = await jobOf('completed');
        expect(done.result).toBe('5 and 20');
        const jobCalls = rig.llm.requests.filter((r) => goalOf(r) !== undefined);
        // The plan and the completion check: no model call between the steps.
        expect(jobCalls).toHaveLength(2);
        expect(isPlanning(jobCalls[0]!)).toBe(true);
        expect(done.planSteps?.map((step) => step.status)).toEqual(['done', 'done']);
      });

      it('hands over to the loop when the check says work remains, or the plan is not valid', async () => {
        rig = await startRig(engine, {
          responder: model((goal, request) => {
            if (isPlanning(request)) return textReply(goal === 'broken' ? 'I would first look around.' : JSON.stringify({ steps: [{ tool: 'calculator', arguments: { expression: '1+1' } }] }));
            if (/The planned steps have run/.test(String(request.messages.at(-1)?.content ?? ''))) return textReply('Not done yet: the second half remains.');
            return textReply(`DONE: the loop finished ${goal}`);
          }),
        });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'planjob remains tools calculator' });
        await approveNext(0);
        expect((await jobOf('completed')).result).toBe('the loop finished remains');
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'planjob broken tools calculator' });
        await approveNext(1);
        await until(async () => (await rig!.app.services.jobs.list({ states: ['completed'] })).length === 2, 5_000, 'the second job');
        const broken = (await rig.app.services.jobs.list()).find((job) => job.goal === 'broken')!;
        expect(broken.planState).toBe('abandoned');
        expect(broken.result).toBe('the loop finished broken');
      });

      it('runs on the model its conversation had chosen with /model use: its plan, its completion check and its steps', async () => {
        rig = await startRig(engine, {
          config: { llm: { models: [{ name: 'other-model' }] } },
          responder: model((goal, request) => {
            if (isPlanning(request)) return textReply(JSON.stringify({ steps: [{ tool: 'calculator', arguments: { expression: '1+1' } }] }));
            if (/The planned steps have run/.test(String(request.messages.at(-1)?.content ?? ''))) return textReply('Not done yet: one more look.');
            return textReply(`DONE: ${goal} on ${request.model}`);
          }),
        });
        rig.platform.channel.command({ chat: dm, sender: ada, name: 'model', args: 'use other-model' });
        await rig.platform.waitFor(() => texts().some((t) => /now uses other-model/.test(t)), 5_000, 'the switch');
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'planjob switched tools calculator' });
        await approveNext(0);
        const result = await rig.platform.waitFor(() => texts().find((t) => /is done\./.test(t)), 10_000, 'the result');
        expect(result).toMatch(/\n\nswitched on other-model$/);
        const jobCalls = rig.llm.requests.filter((r) => goalOf(r) !== undefined);
        expect(jobCalls).toHaveLength(3);
        expect(jobCalls.map((r) => r.model)).toEqual(['other-model', 'other-model', 'other-model']);
      });
    });

    describe('background jobs', () => {
      it('runs a job created in a DM: its tool, its progress message, its result in the DM', async () => {
        const log = new ToolLog();
        rig = await startRig(engine, {
          tools: scenarioTools(log),
          responder: model((goal, request) => (toolResults(request).length ? textReply(`DONE: counted, ${toolResults(request).join(' ').includes('1+1 = 2') ? 'it is 2' : 'no result'}`) : toolCallReply([{ name: 'calculator', arguments: { expression: '1+1' } }]))),
        });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job count tools calculator' });
        await approveNext(0);
        const done = await jobOf('completed');
        expect(rig.app.jobs.scheduler.engineName).toBe(engine.storeUrl ? 'bullmq' : 'in-process');
        expect(done.result).toBe('counted, it is 2');
        expect(done.owner).toBe('test:owner');
        await rig.platform.waitFor(() => texts().some((t) => /Job \S+ "Job count" is done\.\n\ncounted, it is 2/.test(t)), 5_000, 'the result message');
        // One status message, edited to its final state.
        expect(texts().filter((t) => /^✅ Job \S+ "Job count": done/.test(t))).toHaveLength(1);
        expect(texts().some((t) => /chat: .*\{"id":"j\w+","state":"pending"\}/.test(t)), JSON.stringify(texts())).toBe(true);
        // The job's two model calls are its owner's, and /usage shows them apart.
        rig.platform.channel.command({ chat: dm, sender: ada, name: 'usage', args: '' });
        await rig.platform.waitFor(() => texts().some((t) => /Of which your background jobs: .* over 2 model calls/.test(t)), 5_000, 'the usage with the jobs');
      });

      it('is refused in a group: create_job needs an approval, which a group cannot give', async () => {
        rig = await startRig(engine, { responder: model(() => textReply('DONE: never')) });
        const group = testGroup('g1');
        rig.platform.channel.userMessage({ chat: group, sender: ada, text: 'job nothing', mentionsBot: true });
        await rig.platform.waitFor(() => rig!.platform.messagesIn(group).some((m) => /direct message/.test(m.text)), 5_000, 'the refusal');
        expect(await rig.app.services.jobs.list()).toEqual([]);
      });

      it('a call outside the job\'s tools asks its owner in the DM: Approve runs it once, Deny lets the job go on', async () => {
        const log = new ToolLog();
        rig = await startRig(engine, {
          tools: scenarioTools(log),
          responder: model((goal, request) => {
            const results = toolResults(request);
            if (!results.length) return toolCallReply([{ name: 'note_write', arguments: { text: goal } }]);
            return textReply(`DONE: ${results.at(-1)!.replace(/\s+/g, ' ').slice(-60)}`);
          }),
        });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job first' });
        await approveNext(0);
        await jobOf('waiting_approval');
        const question = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[1], 5_000, 'the job\'s question');
        expect(question.text).toMatch(/note_write/);
        expect(question.text).toMatch(/Job \S+ "Job first" wants to run this/);
        rig.platform.channel.press(question.prompt.id, 'approve', ada);
        const first = await jobOf('completed');
        expect(log.notes).toEqual(['first']);
        expect(first.result).toMatch(/saved note "first"/);

        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job second' });
        await approveNext(2);
        const denied = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[3], 5_000, 'the second job\'s question');
        rig.platform.channel.press(denied.prompt.id, 'deny', ada);
        await until(async () => (await rig!.app.services.jobs.list({ states: ['completed'] })).length === 2, 5_000, 'the second job to finish');
        const second = (await rig.app.services.jobs.list()).find((job) => job.goal === 'second')!;
        expect(second.result).toMatch(/denied/);
        expect(log.notes).toEqual(['first']);
      });

      it('"not done yet" is not taken for done; the job goes on until it says DONE', async () => {
        let calls = 0;
        rig = await startRig(engine, {
          responder: model(() => {
            calls += 1;
            return calls === 1 ? textReply('The task is not done yet: I still need to check the second half.') : textReply('DONE: both halves checked.');
          }),
        });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job check' });
        await approveNext(0);
        const done = await jobOf('completed');
        expect(done.result).toBe('both halves checked.');
        expect(calls).toBe(2);
      });

      it('a model that keeps giving the same answer without finishing is told once, then the job fails with a report', async () => {
        rig = await startRig(engine, { responder: model(() => textReply('Still working on it.')) });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job stuck' });
        await approveNext(0);
        const report = await rig.platform.waitFor(() => texts().find((t) => /^❌ Job \S+ "Job stuck" failed/.test(t)), 10_000, 'the failure message');
        expect(report).toMatch(/failed: I kept repeating myself: the same answer 3 times in a row without finishing \("Still working on it\."\)\.$/);
        // Three model calls, not the job's 30 steps; the model was told after the second.
        const jobCalls = rig.llm.requests.filter((r) => goalOf(r) !== undefined);
        expect(jobCalls).toHaveLength(3);
        expect(jobCalls.map((r) => r.messages.filter((m) => m.content === REPEATED_ANSWER_NOTICE).length)).toEqual([0, 0, 1]);
      });

      it('a job whose model says it cannot reach the goal fails with its reason, ended by one full stop', async () => {
        rig = await startRig(engine, { responder: model(() => textReply('FAILED: the site is down.')) });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job unreachable' });
        await approveNext(0);
        const report = await rig.platform.waitFor(() => texts().find((t) => /^❌ Job \S+ "Job unreachable" failed/.test(t)), 10_000, 'the failure message');
        expect(report).toMatch(/failed: the site is down\.$/);
      });

      it('/jobs cancel aborts a hanging model request within 2 s', async () => {
        rig = await startRig(engine, { responder: model(() => hang()) });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job wait' });
        await approveNext(0);
        const running = await jobOf('in_progress');
        await rig.platform.waitFor(() => rig!.llm.requests.filter((r) => goalOf(r) !== undefined).length === 1, 5_000, 'the job\'s model call');
        const asked = Date.now();
        rig.platform.channel.command({ chat: dm, sender: ada, name: 'jobs', args: `cancel ${running.id}` });
        const cancelled = await jobOf('cancelled', 2_000);
        expect(Date.now() - asked).toBeLessThan(2_000);
        expect(cancelled.id).toBe(running.id);
        await rig.platform.waitFor(() => texts().some((t) => t.includes(`Job ${running.id} was cancelled`)), 5_000, 'the confirmation');
      });

      it('a timeout goes to stuck and is repaired; after the bound it fails with a report', async () => {
        rig = await startRig(engine, { responder: model(() => hang()), config: { jobs: { maxRepairAttempts: 1 } } });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job forever timeout 0.005' });
        await approveNext(0);
        const failed = await jobOf('failed', 10_000);
        expect(failed.repairAttempts).toBe(1);
        expect(failed.result).toMatch(/timed out 2 times/);
        // The repaired run was told what happened.
        const jobRequests = rig.llm.requests.filter((r) => goalOf(r) !== undefined);
        expect(jobRequests).toHaveLength(2);
        expect(JSON.stringify(jobRequests[1]!.messages)).toMatch(/ran out of time/);
        await rig.platform.waitFor(() => texts().some((t) => /❌ Job \S+ "Job forever" failed: it timed out 2 times/.test(t)), 5_000, 'the failure message');
      });

      it('a restart resumes a running job; a tool call that finished before is not run again', async () => {
        const log = new ToolLog();
        let slowDone = false;
        rig = await startRig(engine, {
          tools: scenarioTools(log),
          responder: model((_goal, request) => {
            const results = toolResults(request);
            if (!results.length) return toolCallReply([{ name: 'calculator', arguments: { expression: '2+2' } }]);
            if (results.length === 1) return toolCallReply([{ name: 'slow', arguments: { ms: 60_000 } }]);
            slowDone = true;
            return textReply(`DONE: ${results.map((r) => r.replace(/\s+/g, ' ')).join(' / ')}`);
          }),
        });
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'job resume tools calculator,slow' });
        await approveNext(0);
        await rig.platform.waitFor(() => log.slowStarted === 1, 10_000, 'the slow tool');
        await rig.stopApp();
        await rig.startApp();
        const done = await jobOf('completed', 15_000);
        expect(slowDone).toBe(true);
        expect(log.slowStarted).toBe(1);
        expect(done.result).toMatch(/2\+2 = 4/);
        expect(done.result).toMatch(/interrupted \(the bot was stopping\)/);
        const calculatorRuns = rig.llm.requests.filter((r) => goalOf(r) !== undefined).flatMap((r) => r.messages).filter((m) => m.role === 'tool' && String(m.content).includes('2+2 = 4'));
        expect(calculatorRuns.length).toBeGreaterThan(0);
      });
    });
  });
}
