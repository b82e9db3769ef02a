/**
 * A group turn acts with one person's authority. A message of someone else
 * that arrives while a turn runs is not read into it: it waits for a turn of
 * its own, in the order written, and that turn acts as its sender; after a
 * /stop it stays as context only. In a DM the person's messages still join the
 * running turn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { threadKeyOf, type ChatInfo } from '../../src/channels/types.js';
import { actingTool, actOnLatest, type Act } from '../support/acting-tool.js';
import { HeldModel, startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm, testGroup } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'ada', name: 'Ada' };
const bob = { id: 'bob', name: 'Bob' };
const cyd = { id: 'cyd', name: 'Cyd' };

async function start(acts: Act[]): Promise<HeldModel> {
  const model = new HeldModel(actOnLatest);
  rig = await startAppRig({ responder: model.respond, tools: [actingTool(acts)] });
  return model;
}

/** Resolves once `count` messages wait in the chat's thread (accepted, not read by a turn). */
async function waiting(rigged: AppRig, chat: ChatInfo, count: number): Promise<void> {
  const key = threadKeyOf(chat);
  await rigged.platform.waitFor(() => (rigged.app.runtime.runner(key)?.queuedMessages ?? 0) >= count, 10_000, `${count} waiting messages`);
}

describe('who a group turn acts for', () => {
  it("another person's message during Ada's turn gets its own turn, which acts as them", async () => {
    const acts: Act[] = [];
    const model = await start(acts);
    const group = testGroup('crew');
    const say = (sender: typeof ada, text: string) => rig!.platform.channel.userMessage({ chat: group, sender, text, mentionsBot: true });
    const fromAda = say(ada, 'tidy my notes');
    await rig!.platform.waitFor(() => model.waiting === 1, 10_000, "Ada's turn");
    const fromBob = say(bob, 'create a job for Bob');
    await waiting(rig!, group, 1);
    await model.answerUntilIdle(rig!.app);

    const byBob = acts.filter((act) => act.words.includes('create a job for Bob'));
    const byAda = acts.filter((act) => act.words.includes('tidy my notes'));
    expect(byBob.length).toBeGreaterThan(0);
    expect(byBob.map((act) => act.userId)).toEqual(byBob.map(() => 'test:bob'));
    expect(byAda.map((act) => act.userId)).toEqual(byAda.map(() => 'test:ada'));
    // Both are answered, each in a reply to their own message.
    const answers = rig!.platform.messagesIn(group);
    expect(answers.find((sent) => sent.replyTo === fromAda.messageId)?.text).toMatch(/tidy my notes/);
    expect(answers.find((sent) => sent.replyTo === fromBob.messageId)?.text).toMatch(/create a job for Bob/);
  });

  it("messages of several people waiting together are read one person's at a time, in the order written", async () => {
    const acts: Act[] = [];
    const model = await start(acts);
    const group = testGroup('crowd');
    const say = (sender: typeof ada, text: string) => rig!.platform.channel.userMessage({ chat: group, sender, text, mentionsBot: true });
    say(ada, 'first from Ada');
    await rig!.platform.waitFor(() => model.waiting === 1, 10_000, "Ada's turn");
    say(bob, 'one from Bob');
    say(ada, 'second from Ada');
    say(cyd, 'one from Cyd');
    await waiting(rig!, group, 3);
    await model.answerUntilIdle(rig!.app);

    const author = (words: string) => /\[(\w+)\]/.exec(words)?.[1]?.toLowerCase();
    expect(acts.map((act) => [act.userId, author(act.words)])).toEqual([
      ['test:ada', 'ada'],
      ['test:bob', 'bob'],
      ['test:ada', 'ada'],
      ['test:cyd', 'cyd'],
    ]);
    expect(rig!.platform.messagesIn(group).map((sent) => sent.text)).toEqual([
      'acted on: [Ada] first from Ada',
      'acted on: [Bob] one from Bob',
      'acted on: [Ada] second from Ada',
      'acted on: [Cyd] one from Cyd',
    ]);
  });

  it("a /stop keeps another person's waiting message as context, never as a request of the next speaker", async () => {
    const acts: Act[] = [];
    const model = await start(acts);
    const group = testGroup('halt');
    const say = (sender: typeof ada, text: string) => rig!.platform.channel.userMessage({ chat: group, sender, text, mentionsBot: true });
    say(ada, 'tidy my notes');
    await rig!.platform.waitFor(() => model.waiting === 1, 10_000, "Ada's turn");
    say(bob, 'create a job for Bob');
    await waiting(rig!, group, 1);
    rig!.platform.channel.command({ chat: group, sender: ada, name: 'stop' });
    const notice = await rig!.platform.waitFor(() => rig!.platform.messagesIn(group).find((sent) => sent.text.startsWith('⏹️')), 10_000, 'the stop notice');
    expect(notice.text).toMatch(/The message sent meanwhile was not answered; I keep it as context/);
    await model.answerUntilIdle(rig!.app);

    say(cyd, 'what time is it?');
    await model.answerUntilIdle(rig!.app);
    expect(acts.map((act) => act.userId)).toEqual(['test:cyd']);
    const users = model.arrived.at(-1)!.messages.filter((message) => message.role === 'user').map((message) => String(message.content));
    expect(users.filter((text) => text.includes('create a job for Bob'))).toEqual([
      '[Recent messages in this group, not addressed to you; context only]\n[Bob] create a job for Bob',
    ]);
  });

  it("in a DM, the person's message during their turn still joins it", async () => {
    const acts: Act[] = [];
    const model = await start(acts);
    const dm = testDm(ada.id);
    rig!.platform.channel.userMessage({ chat: dm, sender: ada, text: 'first' });
    await rig!.platform.waitFor(() => model.waiting === 1, 10_000, "Ada's turn");
    rig!.platform.channel.userMessage({ chat: dm, sender: ada, text: 'and also this' });
    await waiting(rig!, dm, 1);
    await model.answerUntilIdle(rig!.app);
    // One turn: the first call is skipped for the new message, read at the next step, and answered once.
    expect(acts).toEqual([{ userId: 'test:ada', words: 'and also this' }]);
    expect(rig!.platform.messagesIn(dm).map((sent) => sent.text)).toEqual(['acted on: and also this']);
  });
});
