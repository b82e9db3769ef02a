/**
 * The runtime's bounds and group settings through the real app and the
 * openai-SDK provider: the daily cost limit, the group context window,
 * `groupActivation: always`, the cap on concurrent turns, the per-thread
 * queue limit, and the per-user rate bounding replies to commands and
 * oversized messages as well as the messages the model reads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HeldModel, startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm, testGroup } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const person = (id: string) => ({ id, name: `Person ${id}` });
const userTexts = (rigged: AppRig) =>
  rigged.llm.requests.flatMap((r) => r.messages.filter((m) => m.role === 'user').map((m) => String(m.content)));

describe('daily cost limit', () => {
  it('once reached, the next message gets the limit message and no model request; another user is not affected', async () => {
    // 10 prompt tokens per call (the fake's default usage) at $100,000 per million: $1 a call.
    rig = await startAppRig({
      config: { llm: { prices: { 'fake-model': { input: 100_000, output: 0 } } }, agent: { dailyCostLimitUsd: 1.5 } },
    });
    const spender = person('spender');
    const chat = testDm(spender.id);
    for (const text of ['first', 'second']) {
      rig.platform.channel.userMessage({ chat, sender: spender, text });
      await rig.app.runtime.idle();
    }
    expect(rig.platform.messagesIn(chat).map((m) => m.text)).toEqual(['echo: first', 'echo: second']);
    const served = rig.llm.served;
    rig.platform.channel.userMessage({ chat, sender: spender, text: 'third' });
    await rig.app.runtime.idle();
    expect(rig.llm.served).toBe(served);
    expect(rig.platform.lastMessage(chat)!.text).toMatch(/reached today's usage limit \(\$1\.50;/);
    expect(userTexts(rig)).not.toContain('third');

    const other = person('other');
    rig.platform.channel.userMessage({ chat: testDm(other.id), sender: other, text: 'my turn' });
    await rig.app.runtime.idle();
    expect(rig.platform.messagesIn(testDm(other.id)).map((m) => m.text)).toEqual(['echo: my turn']);
  });
});

describe('groups', () => {
  it('keeps only the last groupContextMessages unaddressed messages as context', async () => {
    rig = await startAppRig({ config: { agent: { groupContextMessages: 3 } } });
    const group = testGroup('chatty');
    for (let n = 1; n <= 7; n++) {
      rig.platform.channel.userMessage({ chat: group, sender: person(`p${n}`), text: `chatter number ${n}` });
    }
    await rig.app.runtime.idle();
    expect(rig.llm.served).toBe(0);
    rig.platform.channel.userMessage({ chat: group, sender: person('asker'), text: 'what did they say?', mentionsBot: true });
    await rig.app.runtime.idle();
    expect(rig.llm.requests).toHaveLength(1);
    const context = userTexts(rig).find((t) => t.startsWith('[Recent messages in this group'));
    expect(context).toBeDefined();
    const lines = context!.split('\n').slice(1);
    expect(lines).toEqual(['[Person p5] chatter number 5', '[Person p6] chatter number 6', '[Person p7] chatter number 7']);
    expect(userTexts(rig).join('\n')).not.toMatch(/chatter number [1-4]\b/);
    expect(rig.platform.messagesIn(group)).toHaveLength(1);
    expect(rig.platform.messagesIn(group)[0]!.text).toMatch(/\[Person asker\] what did they say\?$/);
  });

  it('with groupActivation: always, answers a group message that does not address it', async () => {
    rig = await startAppRig({ config: { agent: { groupActivation: 'always' } } });
    const group = testGroup('open');
    const sent = rig.platform.channel.userMessage({ chat: group, sender: person('a'), text: 'anyone here?', mentionsBot: false });
    await rig.app.runtime.idle();
    expect(rig.platform.messagesIn(group)).toEqual([expect.objectContaining({ text: 'echo: [Person a] anyone here?', replyTo: sent.messageId })]);
  });
});

describe('turn bounds', () => {
  it('with maxConcurrentTurns 2, holds exactly 2 model requests at once and answers all 5 threads as slots free', async () => {
    const model = new HeldModel();
    rig = await startAppRig({ config: { agent: { maxConcurrentTurns: 2 } }, responder: model.respond });
    const users = ['c1', 'c2', 'c3', 'c4', 'c5'].map(person);
    for (const user of users) rig.platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: `hello from ${user.id}` });
    // The other three threads are not ordered with these two: the strongest wait is for their messages
    // to be queued in their runners, which take a message only once a slot is theirs.
    await rig.platform.waitFor(() => model.waiting === 2 && rig!.app.runtime.health().queuedMessages === 3, 10_000, 'two held model requests, three messages waiting');
    expect(model.arrived).toHaveLength(2);
    for (let answered = 1; answered <= 5; answered++) {
      await rig.platform.waitFor(() => model.waiting > 0, 10_000, `held request #${answered}`);
      model.releaseOne();
      await rig.platform.waitFor(
        () => users.filter((u) => rig!.platform.messagesIn(testDm(u.id)).length > 0).length === answered,
        10_000,
        `${answered} answers`,
      );
    }
    await rig.app.runtime.idle();
    expect(model.maxInFlight).toBe(2);
    expect(model.arrived).toHaveLength(5);
    for (const user of users) expect(rig.platform.messagesIn(testDm(user.id)).map((m) => m.text)).toEqual([`echo: hello from ${user.id}`]);
  });

  it('refuses messages beyond maxQueuedPerThread while the thread is busy, and does not process them', async () => {
    const model = new HeldModel();
    rig = await startAppRig({ config: { agent: { maxQueuedPerThread: 2 } }, responder: model.respond });
    const user = person('eager');
    const chat = testDm(user.id);
    rig.platform.channel.userMessage({ chat, sender: user, text: 'm1' });
    await rig.platform.waitFor(() => model.waiting === 1, 10_000, 'the first model request');
    for (const text of ['m2', 'm3', 'm4', 'm5']) rig.platform.channel.userMessage({ chat, sender: user, text });
    const refusals = () => rig!.platform.messagesIn(chat).filter((m) => /messages waiting in this conversation, so this one was not taken/.test(m.text));
    await rig.platform.waitFor(() => refusals().length === 2, 10_000, 'two refusals');
    expect(refusals()[0]!.text).toMatch(/^I already have 2 messages waiting/);
    // Answer everything the thread still has to say.
    await model.answerUntilIdle(rig.app);
    const seen = userTexts(rig);
    expect(seen).toEqual(expect.arrayContaining(['m1', 'm2', 'm3']));
    expect(seen).not.toContain('m4');
    expect(seen).not.toContain('m5');
    const answers = rig.platform.messagesIn(chat).map((m) => m.text).filter((t) => t.startsWith('echo:'));
    expect(answers.join('\n')).toMatch(/m2/);
    expect(answers.join('\n')).toMatch(/m3/);
    expect(answers.join('\n')).not.toMatch(/m4|m5/);
  });
});

describe('the per-user rate bounds replies', () => {
  const isRateNotice = (text: string) => /faster than \d+ a minute/.test(text);

  it('20 commands and 20 oversized messages at 5 a minute get 5 replies and one notice; a /stop among them still stops the turn', async () => {
    const model = new HeldModel();
    rig = await startAppRig({ config: { agent: { userMessagesPerMinute: 5, maxInboundChars: 100 } }, responder: model.respond });
    const user = person('burst');
    const chat = testDm(user.id);
    rig.platform.channel.userMessage({ chat, sender: user, text: 'work on this' });
    await rig.platform.waitFor(() => model.waiting === 1, 10_000, 'the running turn');
    for (let i = 0; i < 20; i++) {
      if (i === 10) rig.platform.channel.command({ chat, sender: user, name: 'stop' });
      rig.platform.channel.command({ chat, sender: user, name: 'help' });
      rig.platform.channel.userMessage({ chat, sender: user, text: 'x'.repeat(500) });
    }
    const stopped = await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text.startsWith('⏹️')), 10_000, 'the stop reply');
    expect(stopped.text).toBe('⏹️ Stopped.');
    await model.answerUntilIdle(rig.app);
    const texts = rig.platform.messagesIn(chat).map((m) => m.text);
    const replies = texts.filter((t) => !t.startsWith('⏹️'));
    // The message that started the turn counts too: 4 more replies, then one notice.
    expect(replies.length).toBeLessThanOrEqual(6);
    expect(replies.filter(isRateNotice)).toHaveLength(1);
    expect(replies.filter((t) => !isRateNotice(t))).toHaveLength(4);
    // The turn was stopped: its answer never came.
    expect(texts.some((t) => t.startsWith('echo:'))).toBe(false);
  });

  it('tells the sender once, not once per dropped command, and says that what follows is dropped too', async () => {
    rig = await startAppRig({ config: { agent: { userMessagesPerMinute: 2 } } });
    const user = person('chatty');
    const chat = testDm(user.id);
    for (let i = 0; i < 10; i++) rig.platform.channel.userMessage({ chat, sender: user, text: '/help' });
    rig.platform.channel.userMessage({ chat, sender: user, text: 'a question' });
    await rig.app.runtime.idle();
    const texts = rig.platform.messagesIn(chat).map((m) => m.text);
    expect(texts).toHaveLength(3);
    expect(texts.filter(isRateNotice)).toHaveLength(1);
    expect(texts.find(isRateNotice)).toMatch(/nor what you send in the next \d+ s/);
    expect(rig.llm.served).toBe(0);
  });
});
