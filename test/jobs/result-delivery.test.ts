/**
 * A job's result through the whole app: it becomes part of the conversation it
 * was posted in (asked afterwards what the job found, the model knows), and it
 * arrives exactly once: a result the platform refused until the bot stopped is
 * posted after the restart, and a start that finds it owed again after it went
 * out posts nothing more.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { silentLogger } from '../../src/log.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { Store } from '../../src/store/store.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);
const FOUND = 'the cheapest flight is on Tuesday';

/** Released when the job may report: until then its model call waits. */
let jobMayEnd: Promise<unknown> = Promise.resolve();

/** "job <goal>" creates a job; the job reports FOUND; anything else is echoed. */
async function model(request: FakeLlmRequest): Promise<FakeLlmEntry> {
  if (/background job/.test(String(request.messages[0]?.content ?? ''))) {
    await jobMayEnd;
    return textReply(`DONE: ${FOUND}`);
  }
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply('On it.');
  const text = String(last.content).replace(/^\[[^\]]*\]\s*/, '');
  const asked = /^job (\S+)/.exec(text);
  if (!asked) return textReply(`echo: ${text}`);
  return toolCallReply([{ name: 'create_job', arguments: { title: `Job ${asked[1]}`, goal: asked[1] } }]);
}

async function createJob(goal: string): Promise<void> {
  rig!.platform.channel.userMessage({ chat: dm, sender: ada, text: `job ${goal}` });
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[0], 5_000, 'the create_job approval');
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
}

function results(): string[] {
  return rig!.platform.messagesIn(dm).map((m) => m.text).filter((t) => /is done\./.test(t));
}

describe('a job\'s result', () => {
  it('is in the conversation\'s history: asked afterwards, the model is shown it as what the bot said', async () => {
    rig = await startAppRig({ responder: model });
    await createJob('flights');
    await rig.platform.waitFor(() => results().length === 1, 10_000, 'the job result');
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'what did the job find?' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => m.text === 'echo: what did the job find?'), 5_000, 'the answer');
    const asked = rig.llm.requests.find((r) => String(r.messages.at(-1)?.content ?? '').includes('what did the job find?'))!;
    const said = asked.messages.filter((m) => m.role === 'assistant').map((m) => String(m.content ?? ''));
    expect(said).toContainEqual(results()[0]);
    expect(results()[0]).toMatch(new RegExp(`Job \\w+ "Job flights" is done\\.\\n\\n${FOUND}$`));
    // Before the question, once.
    expect(said.filter((text) => text.includes(FOUND))).toHaveLength(1);
  });

  it('refused by the platform until the bot stopped, is posted once after the restart; a restart that finds it owed again posts nothing', async () => {
    let release = (): void => undefined;
    jobMayEnd = new Promise<void>((resolve) => (release = resolve));
    rig = await startAppRig({ responder: model });
    await createJob('flights');
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => m.text === 'On it.'), 5_000, 'the answer to the request');
    // Every send fails from here: the result is given up after the outbox's retries (about 7.5 s).
    rig.platform.failNext('send', 1_000);
    let givenUp = false;
    rig.app.services.events.on('message.out', (event) => (givenUp ||= event.type === 'send' && !event.ok));
    release();
    const jobs = rig.app.services.jobs;
    const deadline = Date.now() + 10_000;
    let ended = (await jobs.list({ states: ['completed'] }))[0];
    for (; !ended && Date.now() < deadline; ended = (await jobs.list({ states: ['completed'] }))[0]) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBeDefined();
    // The status line was posted before the failures began: the one send given up is the result's.
    await rig.platform.waitFor(() => givenUp, 15_000, 'the result to be given up');
    await rig.stopApp();
    expect(results()).toHaveLength(0);
    rig.platform.failNext('send', 0);
    await rig.startApp();
    await rig.platform.waitFor(() => results().length === 1, 5_000, 'the result after the restart');
    // The crash this time comes after the post, before the job is marked as told.
    await rig.stopApp();
    await markOwed(rig.dir, ended!.id);
    await rig.startApp();
    // The start looks for results owed in the background, and clears the mark once the result is
    // posted or found already posted: by then a second post would have been made.
    for (const end = Date.now() + 5_000; (await rig.app.services.jobs.get(ended!.id))?.resultOwed; await new Promise((resolve) => setTimeout(resolve, 20))) {
      if (Date.now() > end) throw new Error('the owed result was not settled');
    }
    expect(results()).toHaveLength(1);
    const history = await rig.app.services.history.get('test:dm-owner');
    expect(history!.messages.filter((m) => m.role === 'assistant' && String(m.content).includes(FOUND))).toHaveLength(1);
  }, 30_000);
});

/** Sets a job's final message back to owed in the stopped app's store. */
async function markOwed(dir: string, id: string): Promise<void> {
  const store = await Store.open({ url: undefined, dataDir: dir, log: silentLogger });
  const jobs = new JobStore(store, silentLogger);
  await jobs.update(id, (record) => (record.resultOwed = true));
  await store.close();
}
