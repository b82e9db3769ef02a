/**
 * /stop stops the turn and starts nothing new, but loses nothing: messages sent
 * during the turn stay in the conversation and are read with the next message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const userTexts = (request: FakeLlmRequest) => request.messages.filter((m) => m.role === 'user').map((m) => String(m.content));

async function start(responder: (request: FakeLlmRequest) => FakeLlmEntry, log: ToolLog) {
  rig = await startAppRig({ responder, tools: scenarioTools(log) });
  return rig;
}

describe('/stop', () => {
  it('keeps the messages sent during the turn in the history, says so, and reads them with the next message', async () => {
    const log = new ToolLog();
    const { app, llm, platform } = await start((request) => {
      const texts = userTexts(request);
      if (texts.at(-1) === 'take your time') return toolCallReply([{ name: 'slow', arguments: { ms: 30_000 } }]);
      return textReply(`read: ${texts.slice(1).join(' | ')}`);
    }, log);
    const user = { id: 'ann', name: 'Ann' };
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'take your time' });
    await platform.waitFor(() => log.slowStarted === 1, 5_000, 'the slow tool');
    platform.channel.userMessage({ chat, sender: user, text: 'also, the blue one' });
    platform.channel.command({ chat, sender: user, name: 'stop' });
    const notice = await platform.waitFor(() => platform.messagesIn(chat).find((m) => m.text.startsWith('⏹️')), 5_000, 'the stop notice');
    expect(notice.text).toMatch(/kept your message.*read it with your next message/);
    await app.runtime.idle();
    expect(log.slowAborted).toBe(1);
    // Nothing new ran after the stop.
    expect(llm.requests).toHaveLength(1);
    const record = await app.services.history.get('test:dm-ann');
    expect(record!.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['take your time', 'also, the blue one']);
    expect(record!.inbox).toEqual([]);

    platform.channel.userMessage({ chat, sender: user, text: 'go on' });
    await platform.waitFor(() => platform.messagesIn(chat).find((m) => m.text.startsWith('read:')), 5_000, 'the next answer');
    expect(userTexts(llm.requests.at(-1)!)).toEqual(['take your time', 'also, the blue one', 'go on']);
    expect(platform.messagesIn(chat).filter((m) => m.text.startsWith('read:'))).toHaveLength(1);
  });

  it('says plainly that it stopped when nothing was sent meanwhile', async () => {
    const log = new ToolLog();
    const { app, platform } = await start(() => toolCallReply([{ name: 'slow', arguments: { ms: 30_000 } }]), log);
    const user = { id: 'bo', name: 'Bo' };
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'work' });
    await platform.waitFor(() => log.slowStarted === 1, 5_000, 'the slow tool');
    platform.channel.command({ chat, sender: user, name: 'stop' });
    await app.runtime.idle();
    expect(platform.messagesIn(chat).map((m) => m.text)).toEqual(['⏹️ Stopped.']);
  });
});

describe('memory', () => {
  it('forgets the runner of a thread once it is idle, and makes a new one for its next message', async () => {
    const log = new ToolLog();
    const { app, platform } = await start((request) => textReply(`echo ${userTexts(request).at(-1)}`), log);
    for (let i = 0; i < 50; i++) platform.channel.userMessage({ chat: testDm(`u${i}`), sender: { id: `u${i}`, name: `U${i}` }, text: `hi ${i}` });
    await app.runtime.idle();
    expect(platform.sent.filter((m) => m.text.startsWith('echo'))).toHaveLength(50);
    for (let i = 0; i < 50; i++) expect(app.runtime.runner(`test:dm-u${i}`)).toBeUndefined();
    platform.channel.userMessage({ chat: testDm('u7'), sender: { id: 'u7', name: 'U7' }, text: 'again' });
    await app.runtime.idle();
    expect(platform.messagesIn(testDm('u7')).map((m) => m.text)).toEqual(['echo hi 7', 'echo again']);
  });
});
