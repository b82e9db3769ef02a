/**
 * A graceful shutdown in the middle of work, and the restart after it: the
 * interrupted turn goes on, and a message that arrived while the bot was
 * closing is answered, not dropped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, userTextsSinceAnswer, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

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
});
