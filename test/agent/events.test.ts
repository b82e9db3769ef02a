/**
 * The agent's events, seen by a subscriber while the real app answers a
 * message that needs an approval: what a metrics exporter or a progress
 * display would follow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AgentEvents, type AgentEventMap, type AgentEventName } from '../../src/engine/events.js';
import { threadKeyOf } from '../../src/channels/types.js';
import { silentLogger } from '../../src/log.js';
import { serverError, textReply, toolCallReply } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';

const ADA = { id: 'u1', name: 'Ada' };
const DM = testDm(ADA.id);
const NAMES: AgentEventName[] = ['message.in', 'message.out', 'turn.started', 'turn.ended', 'model.request', 'tool.call', 'approval'];

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Records every event, in order, as `name` plus the fields a test looks at. */
function record(events: AgentEvents): { name: AgentEventName; payload: AgentEventMap[AgentEventName] }[] {
  const seen: { name: AgentEventName; payload: AgentEventMap[AgentEventName] }[] = [];
  for (const name of NAMES) events.on(name, (payload) => seen.push({ name, payload }));
  return seen;
}

describe('agent events', () => {
  it('follow a turn that asks for approval and the turn that resumes after the press', async () => {
    const tools = new ToolLog();
    rig = await startAppRig({
      tools: scenarioTools(tools),
      responder: (request) => (request.messages.at(-1)?.role === 'tool' ? textReply('Done.') : toolCallReply([{ name: 'danger', arguments: { target: 'prod' } }])),
    });
    const { platform } = rig;
    const seen = record(rig.app.services.events);

    platform.channel.userMessage({ chat: DM, sender: ADA, text: 'do it' });
    const prompt = await platform.waitFor(() => platform.approvalsIn(DM)[0], 5000, 'the prompt');
    await platform.waitFor(() => seen.some((e) => e.name === 'turn.ended'), 5000, 'the first turn to end');
    platform.channel.press(prompt.prompt.id, 'approve', ADA);
    await platform.waitFor(() => seen.filter((e) => e.name === 'turn.ended').length === 2, 5000, 'the resumed turn to end');

    const brief = seen.map(({ name, payload }) => {
      if (name === 'turn.started') return `${name}:${(payload as AgentEventMap['turn.started']).cause}`;
      if (name === 'turn.ended') return `${name}:${(payload as AgentEventMap['turn.ended']).outcome}`;
      if (name === 'tool.call') return `${name}:${(payload as AgentEventMap['tool.call']).status}`;
      if (name === 'approval') return `${name}:${(payload as AgentEventMap['approval']).status}`;
      if (name === 'message.in') return `${name}:${(payload as AgentEventMap['message.in']).type}`;
      if (name === 'message.out') return `${name}:${(payload as AgentEventMap['message.out']).type}`;
      return name;
    });
    const first = brief.slice(0, brief.indexOf('turn.ended:need_approval') + 1);
    expect(first).toEqual([
      'message.in:message',
      'turn.started:messages',
      'model.request',
      'tool.call:needs_approval',
      'approval:requested',
      'message.out:approval',
      'turn.ended:need_approval',
    ]);
    const second = brief.slice(first.length);
    expect(second).toEqual(expect.arrayContaining(['message.in:approval', 'approval:approved', 'turn.started:resume', 'tool.call:ok', 'model.request', 'message.out:send', 'turn.ended:response']));
    expect(second.indexOf('turn.started:resume')).toBeLessThan(second.indexOf('tool.call:ok'));
    expect(second.indexOf('tool.call:ok')).toBeLessThan(second.indexOf('turn.ended:response'));
    expect(tools.dangers).toEqual(['prod']);

    const model = seen.find((e) => e.name === 'model.request')!.payload as AgentEventMap['model.request'];
    expect(model).toMatchObject({ thread: threadKeyOf(DM), model: 'fake-model', purpose: 'reply' });
    expect(model.inputTokens).toBeGreaterThan(0);
    const ended = seen.filter((e) => e.name === 'turn.ended').at(-1)!.payload as AgentEventMap['turn.ended'];
    expect(ended).toMatchObject({ thread: threadKeyOf(DM), userId: 'test:u1', cause: 'resume', outcome: 'response' });
  });

  it('reports a failed model request with its kind, and the turn as a failure the person is told about', async () => {
    rig = await startAppRig({ responder: () => serverError() });
    const { platform } = rig;
    const seen = record(rig.app.services.events);
    platform.channel.userMessage({ chat: DM, sender: ADA, text: 'hello' });
    await platform.waitFor(() => seen.some((e) => e.name === 'turn.ended'), 5000, 'the turn to end');
    expect(seen.find((e) => e.name === 'model.request')!.payload).toMatchObject({ error: 'server', outputTokens: 0 });
    expect(seen.find((e) => e.name === 'turn.ended')!.payload).toMatchObject({ outcome: 'error' });
    expect(platform.lastMessage(DM)?.text).toContain('language model');
  });
});

describe('AgentEvents', () => {
  it('keeps calling the other listeners when one throws, and stops calling one that unsubscribed', () => {
    const events = new AgentEvents(silentLogger);
    const calls: string[] = [];
    events.on('approval', () => {
      throw new Error('listener bug');
    });
    const off = events.on('approval', (payload) => calls.push(`a:${payload.status}`));
    events.on('approval', (payload) => calls.push(`b:${payload.status}`));
    events.emit('approval', { thread: 't', tool: 'x', status: 'requested' });
    off();
    events.emit('approval', { thread: 't', tool: 'x', status: 'expired' });
    expect(calls).toEqual(['a:requested', 'b:requested', 'b:expired']);
  });
});
