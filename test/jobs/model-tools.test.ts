/**
 * The job tools the model calls on a person's behalf (`list_jobs`,
 * `job_status`, `cancel_job`, `job_message`) answer with that person's own
 * jobs only; `/jobs show` and `/jobs retry` by the owner; a job that may not
 * ask its owner is refused a call outside its grant; an owner's question that
 * expires counts as Deny.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, type AppRig, type AppRigOptions } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import type { JobRecord } from '../../src/jobs/job.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const bob = { id: 'bob', name: 'Bob' };
const adaDm = testDm(ada.id);
const bobDm = testDm(bob.id);
type TestChat = typeof adaDm;

/** The job's goal, from its first user message; undefined for a chat request. */
function goalOf(request: FakeLlmRequest): string | undefined {
  if (!/background job/.test(String(request.messages[0]?.content ?? ''))) return undefined;
  return /^Goal: (.*)$/m.exec(String(request.messages.find((m) => m.role === 'user')?.content ?? ''))?.[1];
}

/** The name of the tool whose result is the request's last message. */
function lastToolName(request: FakeLlmRequest): string {
  const calls = request.messages.at(-2)?.tool_calls as Array<{ function: { name: string } }> | undefined;
  return calls?.[0]?.function.name ?? '?';
}

/**
 * The chat side: "job GOAL [tools a,b]", "list", "status ID", "cancel ID",
 * "msg ID TEXT"; after a tool it answers "chat[TOOL]: RESULT". The job side is `jobModel`.
 */
function model(jobModel: (goal: string, request: FakeLlmRequest) => FakeLlmEntry) {
  return (request: FakeLlmRequest): FakeLlmEntry => {
    const goal = goalOf(request);
    if (goal !== undefined) return jobModel(goal, request);
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply(`chat[${lastToolName(request)}]: ${String(last.content).replace(/\s+/g, ' ').slice(0, 600)}`);
    const text = String(last.content).replace(/^\[[^\]]*\]\s*/, '');
    const job = /^job (\S+)(?: tools (\S+))?$/.exec(text);
    if (job) return toolCallReply([{ name: 'create_job', arguments: { title: `Job ${job[1]}`, goal: job[1], ...(job[2] ? { tools: job[2].split(',') } : {}) } }]);
    if (text === 'list') return toolCallReply([{ name: 'list_jobs', arguments: {} }]);
    const one = /^(status|cancel) (\S+)$/.exec(text);
    if (one) return toolCallReply([{ name: one[1] === 'status' ? 'job_status' : 'cancel_job', arguments: { id: one[2] } }]);
    const msg = /^msg (\S+) (.*)$/.exec(text);
    if (msg) return toolCallReply([{ name: 'job_message', arguments: { id: msg[1], text: msg[2] } }]);
    return textReply(`echo: ${text}`);
  };
}

/** Tool results so far in a request. */
function toolResults(request: FakeLlmRequest): string[] {
  return request.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

/** A job that keeps waiting (short slow calls, each a little different) until its owner's message says "finish". */
function untilTold(_goal: string, request: FakeLlmRequest): FakeLlmEntry {
  const told = request.messages.some((m) => m.role === 'user' && String(m.content).includes('finish'));
  if (told) return textReply('DONE: finished as told');
  return toolCallReply([{ name: 'slow', arguments: { ms: 200 + toolResults(request).length } }]);
}

async function start(jobModel: (goal: string, request: FakeLlmRequest) => FakeLlmEntry, options: Omit<AppRigOptions, 'responder'> = {}, log = new ToolLog()): Promise<AppRig> {
  rig = await startAppRig({ tools: scenarioTools(log), ...options, responder: model(jobModel) });
  return rig;
}

function send(chat: TestChat, sender: typeof ada, text: string): void {
  rig!.platform.channel.userMessage({ chat, sender, text });
}

/** Sends `text` and waits for the model's answer after the tool `tool` ran. */
async function ask(chat: TestChat, sender: typeof ada, text: string, tool: string): Promise<string> {
  const marker = `chat[${tool}]: `;
  const before = rig!.platform.messagesIn(chat).filter((m) => m.text.startsWith(marker)).length;
  send(chat, sender, text);
  const answer = await rig!.platform.waitFor(() => rig!.platform.messagesIn(chat).filter((m) => m.text.startsWith(marker))[before], 5_000, `the answer after ${tool}`);
  return answer.text.slice(marker.length);
}

async function jobWhere(check: (job: JobRecord) => boolean, what: string, timeoutMs = 10_000): Promise<JobRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await rig!.app.services.jobs.list()).find(check);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; jobs: ${JSON.stringify((await rig!.app.services.jobs.list()).map((job) => [job.id, job.goal, job.state, job.result]))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Asks for a job in `chat` as `sender` and approves it. */
async function createJob(chat: TestChat, sender: typeof ada, text: string): Promise<void> {
  const before = rig!.platform.approvalsIn(chat).length;
  send(chat, sender, text);
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(chat)[before], 5_000, `the approval of "${text}"`);
  expect(prompt.prompt.tool).toBe('create_job');
  rig!.platform.channel.press(prompt.prompt.id, 'approve', sender);
}

describe('the job tools the model calls in a DM', () => {
  it('list_jobs and job_status answer with the asker\'s own jobs; another person\'s job id is "you have no job"', async () => {
    await start((goal, request) => (goal === 'alpha' ? textReply('DONE: the alpha answer') : untilTold(goal, request)));
    await createJob(adaDm, ada, 'job alpha');
    const alpha = await jobWhere((job) => job.goal === 'alpha' && job.state === 'completed', 'Ada\'s job to complete');
    await createJob(bobDm, bob, 'job beta tools slow');
    const beta = await jobWhere((job) => job.goal === 'beta' && job.state === 'in_progress', 'Bob\'s job to run');

    const listed = await ask(adaDm, ada, 'list', 'list_jobs');
    expect(listed).toContain(alpha.id);
    expect(listed).toContain('Job alpha');
    expect(listed).not.toContain(beta.id);
    expect(listed).not.toContain('Job beta');

    const status = await ask(adaDm, ada, `status ${alpha.id}`, 'job_status');
    expect(status).toContain(`"id":"${alpha.id}"`);
    expect(status).toContain('"state":"completed"');
    expect(status).toContain('"result":"the alpha answer"');

    const foreign = await ask(adaDm, ada, `status ${beta.id}`, 'job_status');
    expect(foreign).toContain(`you have no job ${beta.id}`);
    expect(foreign).not.toContain('Job beta');
    expect(foreign).not.toContain('in_progress');

    // Bob sees his own, not Ada's.
    const bobs = await ask(bobDm, bob, 'list', 'list_jobs');
    expect(bobs).toContain(beta.id);
    expect(bobs).not.toContain(alpha.id);
  });

  it('cancel_job cancels the asker\'s own running job and leaves another person\'s running', async () => {
    await start(untilTold);
    await createJob(adaDm, ada, 'job mine tools slow');
    const mine = await jobWhere((job) => job.goal === 'mine' && job.state === 'in_progress', 'Ada\'s job to run');
    await createJob(bobDm, bob, 'job theirs tools slow');
    const theirs = await jobWhere((job) => job.goal === 'theirs' && job.state === 'in_progress', 'Bob\'s job to run');

    const refused = await ask(adaDm, ada, `cancel ${theirs.id}`, 'cancel_job');
    expect(refused).toContain(`you have no job ${theirs.id}`);
    expect((await rig!.app.services.jobs.get(theirs.id))?.state).toBe('in_progress');

    const cancelled = await ask(adaDm, ada, `cancel ${mine.id}`, 'cancel_job');
    expect(cancelled).toContain(mine.id);
    const ended = await jobWhere((job) => job.id === mine.id && job.state === 'cancelled', 'Ada\'s job to be cancelled', 5_000);
    expect(ended.result).toBe('cancelled by its owner');
    await rig!.platform.waitFor(() => rig!.platform.messagesIn(adaDm).some((m) => m.text.includes(`Job ${mine.id}`) && /cancel/i.test(m.text) && !m.text.startsWith('chat[')), 5_000, 'the cancelled job\'s status in the DM');
    expect((await rig!.app.services.jobs.get(theirs.id))?.state).toBe('in_progress');
  });

  it('job_message reaches the asker\'s own running job, which acts on it; another person\'s job never receives it', async () => {
    const seen: string[] = [];
    await start((goal, request) => {
      seen.push(...request.messages.filter((m) => m.role === 'user').map((m) => `${goal}: ${String(m.content)}`));
      return untilTold(goal, request);
    });
    await createJob(adaDm, ada, 'job mine tools slow');
    const mine = await jobWhere((job) => job.goal === 'mine' && job.state === 'in_progress', 'Ada\'s job to run');
    await createJob(bobDm, bob, 'job theirs tools slow');
    const theirs = await jobWhere((job) => job.goal === 'theirs' && job.state === 'in_progress', 'Bob\'s job to run');

    const refused = await ask(adaDm, ada, `msg ${theirs.id} please finish`, 'job_message');
    expect(refused).toContain(`you have no job ${theirs.id}`);
    expect((await rig!.app.services.jobs.get(theirs.id))?.inbox).toEqual([]);

    await ask(adaDm, ada, `msg ${mine.id} please finish`, 'job_message');
    const done = await jobWhere((job) => job.id === mine.id && job.state === 'completed', 'Ada\'s job to act on the message');
    expect(done.result).toBe('finished as told');
    expect(seen.some((text) => text.startsWith('theirs:') && text.includes('please finish'))).toBe(false);
    expect((await rig!.app.services.jobs.get(theirs.id))?.state).toBe('in_progress');
  });
});

describe('/jobs show and /jobs retry by the owner', () => {
  function command(args: string): void {
    rig!.platform.channel.command({ chat: adaDm, sender: ada, name: 'jobs', args });
  }

  it('show lists the goal, the tools and the result; retry of an ended job runs it again as a new job', async () => {
    let runs = 0;
    await start(() => textReply(`DONE: run ${(runs += 1)}`));
    await createJob(adaDm, ada, 'job counting tools calculator');
    const first = await jobWhere((job) => job.goal === 'counting' && job.state === 'completed', 'the job to complete');

    command(`show ${first.id}`);
    const shown = await rig!.platform.waitFor(() => rig!.platform.messagesIn(adaDm).find((m) => m.text.includes('Goal: counting')), 5_000, 'the /jobs show answer');
    const lines = shown.text.split('\n');
    expect(lines[0]).toContain(first.id);
    expect(lines).toContain('Goal: counting');
    expect(lines).toContain('Tools without asking: calculator');
    expect(lines).toContain('Result: run 1');

    command(`retry ${first.id}`);
    const retried = await rig!.platform.waitFor(() => rig!.platform.messagesIn(adaDm).find((m) => m.text.startsWith(`Job ${first.id} runs again as job `)), 5_000, 'the /jobs retry answer');
    const againId = /as job (\S+?)\.?$/.exec(retried.text)![1]!;
    expect(againId).not.toBe(first.id);
    const again = await jobWhere((job) => job.id === againId && job.state === 'completed', 'the retried job to complete');
    expect(again).toMatchObject({ goal: 'counting', tools: ['calculator'], result: 'run 2' });
    expect((await rig!.app.services.jobs.get(first.id))?.result).toBe('run 1');
    expect(await rig!.app.services.jobs.list()).toHaveLength(2);
  });
});

describe('a job\'s call outside its grant', () => {
  /** A job that writes a note, then reports the note tool's result. */
  function writesNote(goal: string, request: FakeLlmRequest): FakeLlmEntry {
    const results = toolResults(request);
    if (!results.length) return toolCallReply([{ name: 'note_write', arguments: { text: goal } }]);
    return textReply(`DONE: ${results.at(-1)!.replace(/\s+/g, ' ')}`);
  }

  it('with jobs.askOwner false is refused without a question, and the job goes on with the refusal', async () => {
    const log = new ToolLog();
    await start(writesNote, { config: { jobs: { askOwner: false } } }, log);
    await createJob(adaDm, ada, 'job unasked');
    const done = await jobWhere((job) => job.goal === 'unasked' && job.state === 'completed', 'the job to complete');
    expect(done.result).toMatch(/"note_write" is not allowed in this background job/);
    expect(log.notes).toEqual([]);
    // Only the create_job prompt: nobody was asked about the note.
    expect(rig!.platform.approvalsIn(adaDm)).toHaveLength(1);
  });

  it('an owner\'s question that expires counts as Deny: the call does not run and the job ends with the denial', async () => {
    const log = new ToolLog();
    await start(writesNote, { config: { agent: { approvalTimeoutMs: 1_000 } } }, log);
    await createJob(adaDm, ada, 'job unanswered');
    const question = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(adaDm)[1], 5_000, 'the job\'s question');
    expect(question.prompt.tool).toBe('note_write');
    await rig!.platform.waitFor(() => question.state === 'resolved', 5_000, 'the question to expire');
    expect(question.outcome?.decision).toBe('expired');
    expect(question.text).toMatch(/Expired \(treated as denied\)/);
    const done = await jobWhere((job) => job.goal === 'unanswered' && job.state === 'completed', 'the job to go on and complete');
    expect(done.result).toMatch(/expired, which counts as a denial/);
    expect(log.notes).toEqual([]);
  });

  it('/jobs cancel while the job waits for its owner ends the question once: the prompt shows it was cancelled, edited one time', async () => {
    const log = new ToolLog();
    await start(writesNote, {}, log);
    await createJob(adaDm, ada, 'job waiting');
    const question = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(adaDm)[1], 5_000, 'the job\'s question');
    const job = await jobWhere((entry) => entry.goal === 'waiting' && entry.state === 'waiting_approval', 'the job to wait for its owner');
    const channel = rig!.platform.channel;
    const resolve = channel.resolveApproval.bind(channel);
    let edits = 0;
    channel.resolveApproval = (message, prompt, outcome) => {
      if (message.ids[0] === question.messageId) edits += 1;
      return resolve(message, prompt, outcome);
    };
    rig!.platform.channel.command({ chat: adaDm, sender: ada, name: 'jobs', args: `cancel ${job.id}` });
    await jobWhere((entry) => entry.id === job.id && entry.state === 'cancelled', 'the job to be cancelled');
    await rig!.platform.waitFor(() => question.state === 'resolved', 5_000, 'the question to end');
    await rig!.app.runtime.idle();
    expect(question.outcome?.decision).toBe('cancelled');
    expect(edits).toBe(1);
    expect(log.notes).toEqual([]);
  });
});
