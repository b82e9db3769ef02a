/**
 * Routines as a person handles them: `list_schedules` and `cancel_schedule`
 * called by the model answer with the asker's own routines only; the owner's
 * `/routines resume` and `/routines run`; a plain reminder fires without a
 * model call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import type { JobRecord } from '../../src/jobs/job.js';
import type { Routine } from '../../src/routines/routine.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const bob = { id: 'bob', name: 'Bob' };
const adaDm = testDm(ada.id);
const bobDm = testDm(bob.id);
type Chat = typeof adaDm;

/** The name of the tool whose result is the request's last message. */
function lastToolName(request: FakeLlmRequest): string {
  const calls = request.messages.at(-2)?.tool_calls as Array<{ function: { name: string } }> | undefined;
  return calls?.[0]?.function.name ?? '?';
}

/**
 * Jobs (a prompt routine's firings) are done at once. The chat side: "daily
 * TEXT" schedules a daily reminder, "remind TEXT in Ns" a reminder once, "work"
 * a daily prompt routine named "news", "routines" lists, "unschedule ID"
 * cancels; after a tool it answers "chat[TOOL]: RESULT".
 */
function model(request: FakeLlmRequest): FakeLlmEntry {
  if (/background job/.test(String(request.messages[0]?.content ?? ''))) return textReply('DONE: the news, summarised');
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply(`chat[${lastToolName(request)}]: ${String(last.content).replace(/\s+/g, ' ').slice(0, 600)}`);
  const text = String(last.content).replace(/^\[[^\]]*\]\s*/, '');
  const daily = /^daily (.+)$/.exec(text);
  if (daily) return toolCallReply([{ name: 'schedule', arguments: { message: daily[1], every: '1d' } }]);
  const once = /^remind (.+) in ([\d.]+)s$/.exec(text);
  if (once) return toolCallReply([{ name: 'schedule', arguments: { message: once[1], at: new Date(Date.now() + Number(once[2]) * 1000).toISOString() } }]);
  if (text === 'work') return toolCallReply([{ name: 'schedule', arguments: { prompt: 'Summarise the news.', every: '1d', name: 'news' } }]);
  if (text === 'routines') return toolCallReply([{ name: 'list_schedules', arguments: {} }]);
  const cancel = /^unschedule (\S+)$/.exec(text);
  if (cancel) return toolCallReply([{ name: 'cancel_schedule', arguments: { id: cancel[1] } }]);
  return textReply(`echo: ${text}`);
}

function send(chat: Chat, sender: typeof ada, text: string): void {
  rig!.platform.channel.userMessage({ chat, sender, text });
}

/** Sends `text` and waits for the model's answer after the tool `tool` ran. */
async function ask(chat: Chat, sender: typeof ada, text: string, tool: string): Promise<string> {
  const marker = `chat[${tool}]: `;
  const before = rig!.platform.messagesIn(chat).filter((m) => m.text.startsWith(marker)).length;
  send(chat, sender, text);
  const answer = await rig!.platform.waitFor(() => rig!.platform.messagesIn(chat).filter((m) => m.text.startsWith(marker))[before], 10_000, `the answer after ${tool}`);
  return answer.text.slice(marker.length);
}

/** Asks for a routine in `chat` as `sender`, approves it, and returns it once stored. */
async function schedule(chat: Chat, sender: typeof ada, text: string): Promise<Routine> {
  const before = rig!.platform.approvalsIn(chat).length;
  const owner = `test:${sender.id}`;
  const known = new Set((await rig!.app.services.routines.list({ owner })).map((routine) => routine.id));
  const answered = ask(chat, sender, text, 'schedule');
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(chat)[before], 5_000, `the approval of "${text}"`);
  expect(prompt.prompt.tool).toBe('schedule');
  rig!.platform.channel.press(prompt.prompt.id, 'approve', sender);
  await answered;
  const added = (await rig!.app.services.routines.list({ owner })).find((routine) => !known.has(routine.id));
  if (!added) throw new Error(`no new routine after "${text}"`);
  return added;
}

function command(args: string): void {
  rig!.platform.channel.command({ chat: adaDm, sender: ada, name: 'routines', args });
}

async function reply(pattern: RegExp): Promise<string> {
  return (await rig!.platform.waitFor(() => rig!.platform.messagesIn(adaDm).find((m) => pattern.test(m.text)), 5_000, `a reply matching ${pattern}`)).text;
}

async function jobWhere(check: (job: JobRecord) => boolean, what: string): Promise<JobRecord> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = (await rig!.app.services.jobs.list()).find(check);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('routines through the model', () => {
  it('list_schedules and cancel_schedule see the asker\'s own routines; another person\'s id is "you have no routine"', async () => {
    rig = await startAppRig({ responder: model });
    const mine = await schedule(adaDm, ada, 'daily water the plants');
    const theirs = await schedule(bobDm, bob, 'daily feed the cat');

    const listed = await ask(adaDm, ada, 'routines', 'list_schedules');
    expect(listed).toContain(`${mine.id}: reminder "water the plants"`);
    expect(listed).not.toContain(theirs.id);
    expect(listed).not.toContain('feed the cat');

    const refused = await ask(adaDm, ada, `unschedule ${theirs.id}`, 'cancel_schedule');
    expect(refused).toContain(`you have no routine ${theirs.id}`);
    expect(await rig.app.services.routines.get(theirs.id)).toBeDefined();

    const cancelled = await ask(adaDm, ada, `unschedule ${mine.id}`, 'cancel_schedule');
    expect(cancelled).toContain(`Routine ${mine.id} is cancelled.`);
    expect(await rig.app.services.routines.get(mine.id)).toBeUndefined();
    expect(await ask(adaDm, ada, 'routines', 'list_schedules')).toContain('You have no routines.');
    expect(await ask(bobDm, bob, 'routines', 'list_schedules')).toContain(`${theirs.id}: reminder "feed the cat"`);
  });
});

describe('/routines resume and run by the owner', () => {
  it('resume turns a paused routine on again with its next firing; run fires it now and leaves its schedule', async () => {
    rig = await startAppRig({ responder: model });
    const routine = await schedule(adaDm, ada, 'work');
    command(`pause ${routine.id}`);
    await reply(new RegExp(`^Routine ${routine.id} is paused\\.$`));
    expect((await rig.app.services.routines.get(routine.id))?.enabled).toBe(false);

    command(`resume ${routine.id}`);
    const resumed = await reply(new RegExp(`^Routine ${routine.id} is on again`));
    expect(resumed).toMatch(/; next \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/);
    const on = await rig.app.services.routines.get(routine.id);
    expect(on?.enabled).toBe(true);
    expect(on?.nextAt).toBeGreaterThan(Date.now());
    expect(await rig.app.services.jobs.list()).toEqual([]);

    command(`run ${routine.id}`);
    await reply(new RegExp(`^Routine ${routine.id} ran now; its schedule is unchanged\\.$`));
    const fired = await jobWhere((job) => job.title === 'news' && job.state === 'completed', 'the routine\'s job');
    expect(fired.result).toBe('the news, summarised');
    await rig.platform.waitFor(() => rig!.platform.messagesIn(adaDm).some((m) => /"news" is done\.\n\nthe news, summarised/.test(m.text)), 5_000, 'the job\'s result in the DM');
    expect((await rig.app.services.routines.get(routine.id))?.nextAt).toBe(on?.nextAt);
  });
});

describe('a plain reminder', () => {
  it('fires with no model call', async () => {
    rig = await startAppRig({ responder: model });
    await schedule(adaDm, ada, 'remind stretch your legs in 3s');
    const before = rig.llm.requests.length;
    await rig.platform.waitFor(() => rig!.platform.messagesIn(adaDm).some((m) => m.text === '⏰ stretch your legs'), 10_000, 'the reminder');
    // A marker turn after the firing: exactly its one request is added.
    send(adaDm, ada, 'ping');
    await rig.platform.waitFor(() => rig!.platform.messagesIn(adaDm).some((m) => m.text === 'echo: ping'), 5_000, 'the marker answer');
    expect(rig.llm.requests.length).toBe(before + 1);
    expect(await rig.app.services.jobs.list()).toEqual([]);
  });
});
