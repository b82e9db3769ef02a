/**
 * A graceful shutdown in the middle of work, and the restart after it: the
 * interrupted turn goes on, and a message that arrived while the bot was
 * closing is answered, not dropped.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, userTextsSinceAnswer, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { ThreadHistory, type OpenTurn } from '../../src/engine/history.js';
import { TurnJournal } from '../../src/engine/turn-journal.js';
import { RESTART_NOTICE } from '../../src/chat/turn-restart.js';
import { IN_PROGRESS_MARK } from '../../src/channels/types.js';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Writes `open` as the thread's journal in the stopped app's store, as a process that died in that turn would have left it. */
async function journalOpenTurn(dir: string, key: string, open: OpenTurn): Promise<void> {
  const store = await Store.open({ url: `sqlite://${join(dir, 'pincer.sqlite')}` });
  const history = new ThreadHistory(store, silentLogger);
  const record = (await history.get(key))!;
  await history.update(key, record.chat, (current) => {
    current.turn = open;
  });
  const journal = new TurnJournal(store, silentLogger);
  journal.mark(key);
  await journal.durable();
  await history.flush();
  await store.close();
}

describe('shutdown and restart', () => {
  it('resumes the interrupted turn and answers a message that arrived while closing', async () => {
    const log = new ToolLog();
    let slow = true;
    const responder = (request: FakeLlmRequest): FakeLlmEntry => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return textReply(`after the tool: ${String(last.content).slice(0, 40)}`);
      const texts = userTextsSinceAnswer(request);
      if (slow && texts.includes('take your time')) return toolCallReply([{ name: 'slow', arguments: { ms: 30_000 } }]);
      return textReply(`answer: ${texts.join(' + ')}`);
    };
    rig = await startAppRig({ responder, tools: scenarioTools(log) });
    const user = { id: 'dee', name: 'Dee' };
    const chat = testDm(user.id);
    rig.platform.channel.userMessage({ chat, sender: user, text: 'take your time' });
    await rig.platform.waitFor(() => log.slowStarted === 1, 5_000, 'the slow tool');

    const stopping = rig.stopApp();
    rig.platform.channel.userMessage({ chat, sender: user, text: 'one more thing' });
    await stopping;
    expect(log.slowAborted).toBe(1);
    expect(rig.platform.messagesIn(chat).map((m) => m.text)).toEqual([expect.stringMatching(/restarting.*pick this up/)]);

    slow = false;
    await rig.startApp();
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).some((m) => m.text.includes('one more thing')), 5_000, 'the kept message answered');
    await rig.app.runtime.idle();
    const texts = rig.platform.messagesIn(chat).map((m) => m.text);
    expect(texts.filter((t) => /picking up where I left off/.test(t))).toHaveLength(1);
    // The message is read once, by the resumed turn, and answered once.
    expect(texts.filter((t) => t.includes('one more thing'))).toHaveLength(1);
    const record = await rig.app.services.history.get('test:dm-dee');
    expect(record!.inbox).toEqual([]);
    expect(record!.turn).toBeUndefined();
    expect(record!.messages.filter((m) => m.role === 'user' && m.content === 'one more thing')).toHaveLength(1);
    // The slow tool was not started again.
    expect(log.slowStarted).toBe(1);
  });

  it('sends an answer interrupted while being sent again under the name of its first sending', async () => {
    rig = await startAppRig();
    const user = { id: 'eve', name: 'Eve' };
    const chat = testDm(user.id);
    const question = rig.platform.channel.userMessage({ chat, sender: user, text: 'hello' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).length > 0, 5_000, 'the answer');
    await rig.app.runtime.idle();
    // Every answer goes out under a name: its thread and when its turn started; with the message it answers, even unquoted in a DM.
    expect(rig.platform.messagesIn(chat)[0]!.idempotencyKey).toMatch(/^answer:test:dm-eve:\d+$/);
    expect(rig.platform.messagesIn(chat)[0]!.after).toBe(question.messageId);
    expect(rig.platform.messagesIn(chat)[0]!.replyTo).toBeUndefined();
    await rig.stopApp();

    // As if the process had died with an answer on its way out: the journal says so.
    await journalOpenTurn(rig.dir, 'test:dm-eve', { startedAt: 1_700_000_000_000, userId: 'test:eve', speaker: user, phase: 'delivering', answer: 'the answer on its way' });

    await rig.startApp();
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text === 'the answer on its way'), 5_000, 'the answer sent again');
    const resent = rig.platform.messagesIn(chat).find((m) => m.text === 'the answer on its way')!;
    expect(resent.idempotencyKey).toBe('answer:test:dm-eve:1700000000000');
  });

  it('replaces a reply that was streaming when the bot stopped with the restart notice, then answers once', async () => {
    let streaming = true;
    const draft = `A long answer that takes its time: ${'word '.repeat(60)}`;
    const responder = (): FakeLlmEntry => (streaming ? textReply(draft, { chunkSize: 8, chunkDelayMs: 100 }) : textReply('the whole answer, after the restart'));
    rig = await startAppRig({ responder, config: { llm: { stream: true } } });
    const user = { id: 'fay', name: 'Fay' };
    const chat = testDm(user.id);
    rig.platform.channel.userMessage({ chat, sender: user, text: 'tell me at length' });
    // The reply shows in progress, and the journal names the message it streams into.
    const shown = await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text.endsWith(IN_PROGRESS_MARK)), 10_000, 'the streamed draft');
    await rig.platform.waitFor(async () => (await rig!.app.services.history.get('test:dm-fay'))?.turn?.draft?.[0] === shown.id, 5_000, 'the draft in the journal');
    await rig.stopApp();

    streaming = false;
    await rig.startApp();
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).some((m) => m.text === 'the whole answer, after the restart'), 5_000, 'the answer');
    await rig.app.runtime.idle();
    const messages = rig.platform.messagesIn(chat);
    // The half-written draft became the notice; nothing is left marked in progress; the answer came once.
    expect(messages.find((m) => m.id === shown.id)!.text).toBe(RESTART_NOTICE);
    expect(messages.filter((m) => m.text.endsWith(IN_PROGRESS_MARK))).toEqual([]);
    expect(messages.filter((m) => m.text === 'the whole answer, after the restart')).toHaveLength(1);
  });

  it('delivers an answer that was streamed, interrupted while being delivered, by editing its draft', async () => {
    rig = await startAppRig();
    const user = { id: 'gus', name: 'Gus' };
    const chat = testDm(user.id);
    rig.platform.channel.userMessage({ chat, sender: user, text: 'hello' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).length > 0, 5_000, 'the first answer');
    await rig.app.runtime.idle();
    // As if the process had died delivering an answer it had streamed into a draft.
    const shown = await rig.platform.channel.send(chat, `the answer on its${IN_PROGRESS_MARK}`);
    await rig.stopApp();
    await journalOpenTurn(rig.dir, 'test:dm-gus', { startedAt: 1_700_000_000_000, userId: 'test:gus', speaker: user, phase: 'delivering', answer: 'the answer on its way', draft: shown.ids });

    await rig.startApp();
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.id === shown.ids[0] && m.text === 'the answer on its way'), 5_000, 'the draft edited into the answer');
    await rig.app.runtime.idle();
    expect(rig.platform.messagesIn(chat).filter((m) => m.text.startsWith('the answer on its'))).toHaveLength(1);
  });
});
