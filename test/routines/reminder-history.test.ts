/**
 * A reminder through the whole app is part of the conversation it was posted
 * in: asked afterwards what it said, the model is shown it as what the bot
 * said.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startAppRig, echoAll, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { reminderRecord } from './records.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

function reminders(): string[] {
  return rig!.platform.messagesIn(dm).map((m) => m.text).filter((t) => t.startsWith('⏰ '));
}

describe('a reminder', () => {
  it('is in the conversation\'s history: asked afterwards, the model is shown it as what the bot said', async () => {
    rig = await startAppRig({ responder: echoAll });
    const at = Date.now() + 100;
    await rig.app.routines.scheduler.add({ ...reminderRecord('rwater001', 'drink some water', at), schedule: { kind: 'at', at } });
    await rig.platform.waitFor(() => reminders().length === 1, 5_000, 'the reminder');
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'what did you remind me of?' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => m.text.startsWith('echo: what did you remind me of?')), 5_000, 'the answer');
    const asked = rig.llm.requests.find((r) => String(r.messages.at(-1)?.content ?? '').includes('what did you remind me of?'))!;
    const said = asked.messages.filter((m) => m.role === 'assistant').map((m) => String(m.content ?? ''));
    expect(said).toEqual(['⏰ drink some water']);
  });
});
