import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalPayload } from '../../../src/channels/approval-payload.js';
import type { ApprovalPrompt, ChatAddress, InboundApprovalAnswer, InboundMessage } from '../../../src/channels/types.js';
import type { FakeUser } from '../../fakes/discord/index.js';
import { startHarness, type Harness } from './harness.js';

const EPHEMERAL = 64;
const SUCCESS = 3;
const PRIMARY = 1;
const DANGER = 4;

interface Button {
  type: number;
  style: number;
  label: string;
  custom_id: string;
}

describe('discord approval prompts', () => {
  let h: Harness;
  let alice: FakeUser;
  let dm: ChatAddress;
  let counter = 0;

  beforeAll(async () => {
    h = await startHarness({ prepare: (discord) => void (alice = discord.addMember('Alice')) });
    dm = { channel: 'discord', chatId: h.discord.dmChannel(alice).id };
  });
  afterAll(() => h.close());

  const prompt = (overrides: Partial<ApprovalPrompt> = {}): ApprovalPrompt => ({
    id: `ap${++counter}xYz_-${'k'.repeat(30)}`,
    title: 'Approval needed',
    tool: 'http_fetch',
    summary: 'Fetch https://example.com',
    args: '{"url":"https://example.com"}',
    actions: ['approve', 'always', 'deny'],
    requestedBy: { id: alice.id, name: 'Alice' },
    expiresAt: Date.now() + 600_000,
    ...overrides,
  });
  const buttonsOf = (messageId: string) =>
    ((h.discord.message(messageId)!.components[0] as { components?: Button[] } | undefined)?.components ?? []);

  it('shows the prompt with Approve, Always allow and Deny buttons carrying short payloads', async () => {
    const shown = prompt();
    const sent = await h.channel.sendApproval(dm, shown);
    const message = h.discord.message(sent.ids.at(-1)!)!;
    expect(message.content).toContain('http_fetch');
    expect(message.content).toContain('Fetch https://example.com');
    const buttons = buttonsOf(message.id);
    expect(buttons.map((b) => [b.label, b.style])).toEqual([
      ['Approve', SUCCESS],
      ['Always allow', PRIMARY],
      ['Deny', DANGER],
    ]);
    for (const button of buttons) expect(button.custom_id.length).toBeLessThanOrEqual(100);
    expect(buttons.map((b) => decodeApprovalPayload(b.custom_id))).toEqual([
      { approvalId: shown.id, action: 'approve' },
      { approvalId: shown.id, action: 'always' },
      { approvalId: shown.id, action: 'deny' },
    ]);
  });

  it('leaves out Always allow when the prompt does not offer it', async () => {
    const sent = await h.channel.sendApproval(dm, prompt({ actions: ['approve', 'deny'] }));
    expect(buttonsOf(sent.ids.at(-1)!).map((b) => b.label)).toEqual(['Approve', 'Deny']);
  });

  it('renders another button set (Continue / Stop / Try another way) and turns a press into that action', async () => {
    const { tool: _tool, args: _args, ...base } = prompt();
    const loop: ApprovalPrompt = { ...base, title: 'Am I going in circles?', summary: 'The same search ran 3 times.', actions: ['continue', 'stop', 'redirect'] };
    const sent = await h.channel.sendApproval(dm, loop);
    const buttons = buttonsOf(sent.ids[0]!);
    expect(buttons.map((b) => [b.label, b.style])).toEqual([
      ['Continue', SUCCESS],
      ['Stop', DANGER],
      ['Try another way', PRIMARY],
    ]);
    expect(h.discord.message(sent.ids[0]!)!.content).toContain('Am I going in circles?');
    h.discord.pressButton(alice, sent.ids[0]!, buttons[1]!.custom_id);
    const answer = await h.events.next<InboundApprovalAnswer>((e) => e.type === 'approval');
    expect(answer).toMatchObject({ approvalId: loop.id, action: 'stop' });
  });

  it('turns a press into an approval answer from the presser, and a quick respond into an ephemeral reply', async () => {
    const shown = prompt();
    const sent = await h.channel.sendApproval(dm, shown);
    const deny = buttonsOf(sent.ids[0]!)[2]!;
    const press = h.discord.pressButton(alice, sent.ids[0]!, deny.custom_id);
    const answer = await h.events.next<InboundApprovalAnswer>((e) => e.type === 'approval');
    expect(answer).toMatchObject({ approvalId: shown.id, action: 'deny', sender: { id: alice.id, name: 'Alice' }, chat: { chatId: dm.chatId, kind: 'dm' } });
    await answer.respond({ text: 'Denied.' });
    const callback = await h.discord.waitFor(() => press.callbacks[0]);
    expect(callback).toMatchObject({ type: 4, data: { content: 'Denied.', flags: EPHEMERAL } });
  });

  it('acknowledges a press within 3 s when the agent does not respond; a later respond is an ephemeral follow-up', async () => {
    const sent = await h.channel.sendApproval(dm, prompt());
    const press = h.discord.pressButton(alice, sent.ids[0]!, buttonsOf(sent.ids[0]!)[0]!.custom_id);
    const answer = await h.events.next<InboundApprovalAnswer>((e) => e.type === 'approval');
    const callback = await h.discord.waitFor(() => press.callbacks[0], 3_500);
    expect(callback.type).toBe(6);
    expect(callback.at - press.createdAt).toBeLessThan(3_000);
    await answer.respond({ text: 'That approval has expired.' });
    const notice = h.discord.ephemeralFor(alice.id).at(-1)!;
    expect(notice).toMatchObject({ content: 'That approval has expired.', interactionId: press.id, flags: EPHEMERAL });
  });

  it('edits the prompt to its outcome and removes the buttons', async () => {
    const shown = prompt();
    const sent = await h.channel.sendApproval(dm, shown);
    await h.channel.resolveApproval(sent, shown, { decision: 'approved', by: 'Alice' });
    const message = h.discord.message(sent.ids[0]!)!;
    expect(message.content).toContain('✅ Approved by Alice');
    expect(message.content).toContain('http_fetch');
    expect(message.components).toEqual([]);
    expect(message.history.at(0)!.components).not.toEqual([]);
  });

  it('answers a button that is not an approval with "no longer valid" and emits nothing', async () => {
    const sent = await h.channel.sendApproval(dm, prompt());
    const press = h.discord.pressButton(alice, sent.ids[0]!, 'some-old-button:42');
    const callback = await h.discord.waitFor(() => press.callbacks[0]);
    expect(callback).toMatchObject({ type: 4, data: { content: 'This button is no longer valid.', flags: EPHEMERAL } });
    h.discord.userMessage({ channelId: dm.chatId, author: alice, content: 'next' });
    expect((await h.events.next<InboundMessage>()).text).toBe('next');
  });
});
