import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STALE_BUTTON } from '../../../src/channels/types.js';
import type { ApprovalPrompt, InboundApprovalAnswer } from '../../../src/channels/types.js';
import { messageText, readableText } from '../../fakes/slack/index.js';
import { ALICE, BOB, DM_ALICE, GENERAL, startHarness, type Harness } from './harness.js';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness.close();
});

function prompt(id: string, allowAlways = true): ApprovalPrompt {
  return {
    id,
    title: 'Approval needed',
    tool: 'http_fetch',
    summary: 'Fetch https://example.com',
    args: '{"url":"https://example.com/?a=1&b=<2>"}',
    reason: 'to read the page',
    actions: allowAlways ? ['approve', 'always', 'deny'] : ['approve', 'deny'],
    requestedBy: { id: ALICE.id, name: ALICE.name },
    expiresAt: Date.now() + 10 * 60_000,
  };
}

interface Block {
  type: string;
  block_id?: string;
  elements?: { action_id: string; value: string; style?: string; text: { text: string } }[];
}

describe('SlackChannel approvals', () => {
  it('shows the prompt with Approve, Always allow and Deny buttons carrying only the id and action', async () => {
    const { fake, channel } = harness;
    const sent = await channel.sendApproval({ channel: 'slack', chatId: DM_ALICE }, prompt('ap1'));
    const message = fake.workspace.message(DM_ALICE, sent.ids[0]!)!;
    const blocks = message.blocks as Block[];
    expect(blocks.map((block) => block.type)).toEqual(['section', 'actions']);
    expect(blocks[1]!.elements!.map((button) => [button.text.text, button.action_id, button.value, button.style])).toEqual([
      ['Approve', 'pa:ap1:y', 'pa:ap1:y', 'primary'],
      ['Always allow', 'pa:ap1:a', 'pa:ap1:a', undefined],
      ['Deny', 'pa:ap1:n', 'pa:ap1:n', 'danger'],
    ]);
    const text = readableText(messageText(message));
    expect(text).toContain('Approval needed: http_fetch');
    expect(text).toContain('{"url":"https://example.com/?a=1&b=<2>"}');
  });

  it('offers no Always allow when the prompt does not', async () => {
    const sent = await harness.channel.sendApproval({ channel: 'slack', chatId: DM_ALICE }, prompt('ap2', false));
    const blocks = harness.fake.workspace.message(DM_ALICE, sent.ids[0]!)!.blocks as Block[];
    expect(blocks[1]!.elements!.map((button) => button.value)).toEqual(['pa:ap2:y', 'pa:ap2:n']);
  });

  it('renders another button set (Continue / Stop / Try another way) and turns a press into that action', async () => {
    const { fake, channel, recorder } = harness;
    const { tool: _tool, args: _args, ...base } = prompt('ap8');
    const loop: ApprovalPrompt = { ...base, title: 'Am I going in circles?', summary: 'The same search ran 3 times.', actions: ['continue', 'stop', 'redirect'] };
    const sent = await channel.sendApproval({ channel: 'slack', chatId: DM_ALICE }, loop);
    const message = fake.workspace.message(DM_ALICE, sent.ids[0]!)!;
    const blocks = message.blocks as Block[];
    expect(blocks[1]!.elements!.map((button) => [button.text.text, button.value, button.style])).toEqual([
      ['Continue', 'pa:ap8:c', 'primary'],
      ['Stop', 'pa:ap8:s', 'danger'],
      ['Try another way', 'pa:ap8:t', undefined],
    ]);
    expect(readableText(messageText(message))).toContain('Am I going in circles?');
    const before = recorder.events.length;
    await fake.pressButton({ channel: DM_ALICE, user: ALICE.id, messageTs: sent.ids[0]!, actionId: 'pa:ap8:c' });
    const answer = (await recorder.waitFor(before + 1))[before] as InboundApprovalAnswer;
    expect(answer).toMatchObject({ approvalId: 'ap8', action: 'continue' });
  });

  it('acknowledges a press and yields the answer with the presser; respond is ephemeral to the presser', async () => {
    const { fake, channel, recorder } = harness;
    const sent = await channel.sendApproval({ channel: 'slack', chatId: DM_ALICE }, prompt('ap3'));
    const before = recorder.events.length;
    const envelopeId = await fake.pressButton({ channel: DM_ALICE, user: ALICE.id, messageTs: sent.ids[0]!, actionId: 'pa:ap3:a' });
    expect(fake.acked(envelopeId)).toBe(true);
    const answer = (await recorder.waitFor(before + 1))[before] as InboundApprovalAnswer;
    expect(answer).toMatchObject({
      type: 'approval',
      approvalId: 'ap3',
      action: 'always',
      sender: { id: ALICE.id, name: ALICE.name },
      chat: { chatId: DM_ALICE, kind: 'dm', scope: 'global' },
    });
    await answer.respond({ text: 'Saved: **always** allowed', private: true });
    await answer.respond({ text: 'a second notice is dropped' });
    expect(fake.ephemerals(ALICE.id)).toEqual([{ user: ALICE.id, channel: DM_ALICE, text: 'Saved: *always* allowed', kind: 'ephemeral', seq: expect.any(Number) }]);
  });

  it('tells the presser of a button it does not know that the button is no longer valid, and yields nothing', async () => {
    const { fake, recorder } = harness;
    // A button of an earlier version of the bot, in a message still on screen.
    const posted = (await (
      await fetch(`${fake.apiUrl}chat.postMessage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fake.botToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: DM_ALICE, text: 'old prompt', blocks: [{ type: 'actions', elements: [{ type: 'button', action_id: 'approve_v0', value: 'call-7', text: { type: 'plain_text', text: 'Approve' } }] }] }),
      })
    ).json()) as { ts: string };
    const before = recorder.events.length;
    const envelopeId = await fake.pressButton({ channel: DM_ALICE, user: ALICE.id, messageTs: posted.ts, actionId: 'approve_v0' });
    expect(fake.acked(envelopeId)).toBe(true);
    await expect.poll(() => fake.ephemerals(ALICE.id).at(-1)?.text).toBe(STALE_BUTTON);
    expect(recorder.events.length).toBe(before);
  });

  it('resolves a prompt by rewriting it with the outcome and no buttons', async () => {
    const { fake, channel } = harness;
    const approval = prompt('ap4');
    const sent = await channel.sendApproval({ channel: 'slack', chatId: DM_ALICE }, approval);
    await channel.resolveApproval(sent, approval, { decision: 'denied', by: 'Alice' });
    const message = fake.workspace.message(DM_ALICE, sent.ids[0]!)!;
    expect((message.blocks as Block[]).map((block) => block.type)).toEqual(['section']);
    const text = readableText(messageText(message));
    expect(text).toContain('Denied by Alice');
    expect(text).not.toContain('Expires in');
  });

  it('puts a prompt in a channel thread into that thread, and a press there names the thread', async () => {
    const { fake, channel, recorder } = harness;
    const root = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'do it', mention: true });
    const sent = await channel.sendApproval({ channel: 'slack', chatId: GENERAL, subId: root.ts }, prompt('ap5'));
    expect(fake.workspace.message(GENERAL, sent.ids[0]!)?.thread_ts).toBe(root.ts);
    const before = recorder.events.length;
    await fake.pressButton({ channel: GENERAL, user: BOB.id, messageTs: sent.ids[0]!, actionId: 'pa:ap5:y' });
    const answer = (await recorder.waitFor(before + 1))[before] as InboundApprovalAnswer;
    expect(answer).toMatchObject({ approvalId: 'ap5', action: 'approve', sender: { id: BOB.id }, chat: { chatId: GENERAL, subId: root.ts, kind: 'group' } });
    await answer.respond({ text: 'Not yours to answer' });
    expect(fake.ephemerals(BOB.id).at(-1)).toMatchObject({ channel: GENERAL, thread_ts: root.ts, text: 'Not yours to answer' });
  });
});
