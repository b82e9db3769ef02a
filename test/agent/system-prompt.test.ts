import { afterEach, describe, expect, it } from 'vitest';
import { buildSystemPrompt, SELF_CHECK_INSTRUCTION } from '../../src/chat/system-prompt.js';
import { testDm } from '../support/test-channel.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';

const facts = {
  agentName: 'pincer',
  extra: '',
  chat: testDm('ada'),
  speaker: { id: 'ada', name: 'Ada' },
  tools: [{ name: 'calculator', description: 'math', parameters: { type: 'object' } }],
  now: new Date('2026-01-02T03:04:05Z'),
};

describe('the self-check instruction for tool results', () => {
  it('is off by default and on when configured, with tools only', () => {
    expect(buildSystemPrompt(facts)).not.toContain(SELF_CHECK_INSTRUCTION);
    expect(buildSystemPrompt({ ...facts, selfCheck: true })).toContain(SELF_CHECK_INSTRUCTION);
    expect(buildSystemPrompt({ ...facts, tools: [], selfCheck: true })).not.toContain(SELF_CHECK_INSTRUCTION);
  });

  let rig: AppRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('reaches the model when agent.loopGuards.selfCheck is set', async () => {
    rig = await startAppRig({ config: { agent: { loopGuards: { selfCheck: true } } }, tools: scenarioTools(new ToolLog()) });
    const chat = testDm('ada');
    rig.platform.channel.userMessage({ chat, sender: { id: 'ada', name: 'Ada' }, text: 'hello' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat)[0], 10_000, 'the answer');
    expect(String(rig.llm.requests[0]!.messages[0]!.content)).toContain(SELF_CHECK_INSTRUCTION);
  });
});
