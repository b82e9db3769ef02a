import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InlineKeyboardButton } from 'grammy/types';
import { STALE_BUTTON } from '../../../src/channels/types.js';
import type { ApprovalPrompt, ChatAddress, InboundApprovalAnswer } from '../../../src/channels/types.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, BOB, dmOf, sleep, startChannel, type Harness } from './helpers.js';

const DM: ChatAddress = { channel: 'telegram', chatId: String(ALICE.id) };

function prompt(overrides: Partial<ApprovalPrompt> = {}): ApprovalPrompt {
  return {
    id: 'Ab3_-xYz9'.repeat(4).slice(0, 36),
    title: 'Approval needed',
    tool: 'http_fetch',
    summary: 'Fetch https://example.com/?a=1&b=<2>',
    args: '{"url":"https://example.com/?a=1&b=<2>"}',
    actions: ['approve', 'always', 'deny'],
    requestedBy: { id: String(ALICE.id), name: 'Alice' },
    expiresAt: Date.now() + 10 * 60_000,
    ...overrides,
  };
}

function buttons(fake: FakeTelegram, messageId: string): InlineKeyboardButton.CallbackButton[] {
  const state = fake.chatMessages(ALICE.id).find((m) => String(m.messageId) === messageId);
  return (state?.replyMarkup?.inline_keyboard.flat() ?? []) as InlineKeyboardButton.CallbackButton[];
}

describe('Telegram approvals', () => {
  let fake: FakeTelegram;
  let harness: Harness;

  beforeEach(async () => {
    fake = await startFakeTelegram();
    harness = await startChannel(fake, { options: { callbackAnswerDelayMs: 2000 } });
  });

  afterEach(async () => {
    await harness.channel.stop();
    await fake.close();
  });

  it('shows the prompt with Approve / Always allow / Deny buttons whose data fits 64 bytes', async () => {
    const sent = await harness.channel.sendApproval(DM, prompt({ id: 'x'.repeat(40) }));
    const keys = buttons(fake, sent.ids[0]!);
    expect(keys.map((b) => b.text)).toEqual(['Approve', 'Always allow', 'Deny']);
    for (const key of keys) expect(Buffer.byteLength(key.callback_data)).toBeLessThanOrEqual(64);
    const [message] = fake.chatMessages(ALICE.id);
    expect(message!.parseMode).toBe('HTML');
    expect(message!.plainText).toContain('Approval needed: http_fetch');
    expect(message!.plainText).toContain('"url":"https://example.com/?a=1&b=<2>"');
  });

  it('leaves out Always allow when the prompt does not offer it', async () => {
    const sent = await harness.channel.sendApproval(DM, prompt({ actions: ['approve', 'deny'] }));
    expect(buttons(fake, sent.ids[0]!).map((b) => b.text)).toEqual(['Approve', 'Deny']);
  });

  it('renders another button set (Continue / Stop / Try another way) and turns a press into that action', async () => {
    const { tool: _tool, args: _args, ...base } = prompt();
    const loop: ApprovalPrompt = { ...base, title: 'Am I going in circles?', summary: 'The same search ran 3 times.', actions: ['continue', 'stop', 'redirect'] };
    const sent = await harness.channel.sendApproval(DM, loop);
    const keys = buttons(fake, sent.ids[0]!);
    expect(keys.map((b) => b.text)).toEqual(['Continue', 'Stop', 'Try another way']);
    const [message] = fake.chatMessages(ALICE.id);
    expect(message!.plainText).toContain('Am I going in circles?');
    expect(message!.plainText).not.toContain('json');
    fake.pressButton({ chat: dmOf(ALICE), from: ALICE, messageId: Number(sent.ids[0]), data: keys[2]!.callback_data });
    const answer = await harness.events.next<InboundApprovalAnswer>((e) => e.type === 'approval');
    expect(answer).toMatchObject({ approvalId: loop.id, action: 'redirect' });
  });

  it('turns a press into an approval answer from the presser, and shows the response as a toast', async () => {
    const p = prompt();
    const sent = await harness.channel.sendApproval(DM, p);
    const always = buttons(fake, sent.ids[0]!)[1]!;
    fake.pressButton({ chat: dmOf(ALICE), from: BOB, messageId: Number(sent.ids[0]), data: always.callback_data });

    const answer = await harness.events.next<InboundApprovalAnswer>((e) => e.type === 'approval');
    expect(answer).toMatchObject({ approvalId: p.id, action: 'always', sender: { id: String(BOB.id), name: 'Bob' }, chat: { chatId: String(ALICE.id), kind: 'dm' } });
    await answer.respond({ text: 'Only Alice can answer this.', private: true });
    expect(fake.callbackAnswers).toMatchObject([{ userId: String(BOB.id), text: 'Only Alice can answer this.', showAlert: false }]);

    // The delayed empty answer must not follow: a press is answered once.
    await sleep(2200);
    expect(fake.callbackAnswers).toHaveLength(1);
  });

  it('answers a press the agent never responds to within about two seconds', async () => {
    const sent = await harness.channel.sendApproval(DM, prompt());
    const approve = buttons(fake, sent.ids[0]!)[0]!;
    fake.pressButton({ chat: dmOf(ALICE), from: ALICE, messageId: Number(sent.ids[0]), data: approve.callback_data });
    await harness.events.next((e) => e.type === 'approval');
    const [answer] = await waitFor(() => (fake.callbackAnswers.length ? fake.callbackAnswers : undefined), 3500, 'callback answer');
    expect(answer!.text).toBeUndefined();
    expect(answer!.afterMs).toBeGreaterThanOrEqual(1500);
    expect(answer!.afterMs).toBeLessThan(3000);
  });

  it('answers a press on a button that is not an approval with a short notice and emits nothing', async () => {
    const sent = await harness.channel.send(DM, 'old message');
    fake.pressButton({ chat: dmOf(ALICE), from: ALICE, messageId: Number(sent.ids[0]), data: 'something-else' });
    await waitFor(() => fake.callbackAnswers.length > 0, 2000, 'callback answer');
    expect(fake.callbackAnswers[0]).toMatchObject({ text: STALE_BUTTON });
    expect(fake.callbackAnswers[0]!.afterMs).toBeLessThan(1000);
    expect(harness.events.seen).toEqual([]);
  });

  it('resolveApproval shows the outcome and removes the keyboard', async () => {
    const p = prompt();
    const sent = await harness.channel.sendApproval(DM, p);
    await harness.channel.resolveApproval(sent, p, { decision: 'approved', by: 'Alice' });
    const [message] = fake.chatMessages(ALICE.id);
    expect(message!.replyMarkup).toBeUndefined();
    expect(message!.plainText).toContain('✅ Approved by Alice');
    expect(message!.plainText).toContain('Approval needed: http_fetch');
    expect(message!.plainText).not.toContain('Expires in');
  });
});
