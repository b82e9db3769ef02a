import { describe, expect, it } from 'vitest';
import { Outbox } from '../../src/engine/outbox.js';
import type { ApprovalPrompt, ChatAddress } from '../../src/channels/types.js';
import { silentLogger } from '../../src/log.js';
import { createRedactor } from '../../src/safety/secrets.js';
import { TestChannel } from '../support/test-channel.js';

const TOKEN = 'whsec_' + '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const CHAT: ChatAddress = { channel: 'test', chatId: 'dm-1' };

/** An outbox over a test channel that redacts nothing itself, so what it records is what the outbox let through. */
function setup(): { outbox: Outbox; channel: TestChannel } {
  const channel = new TestChannel();
  const redactor = createRedactor([TOKEN]);
  return { outbox: new Outbox(new Map([[channel.name, channel]]), (text) => redactor.redact(text), silentLogger), channel };
}

describe('Outbox redaction', () => {
  it('shows no beginning of a configured credential in a streamed preview or its edits', async () => {
    const { outbox, channel } = setup();
    const sent = await outbox.send(CHAT, `The secret is ${TOKEN.slice(0, 10)} …`);
    await outbox.edit(sent!, `The secret is ${TOKEN.slice(0, 25)} …`);
    const texts = channel.platform.sent.map((message) => message.text);
    expect(texts).toEqual([`The secret is [redacted] …`]);
  });

  it("redacts an approval prompt's arguments, summary and the model's reason", async () => {
    const { outbox, channel } = setup();
    const prompt: ApprovalPrompt = {
      id: 'a1',
      title: 'Approval needed',
      tool: 'http_fetch',
      summary: `Fetch with ${TOKEN}`,
      args: JSON.stringify({ url: `https://example.com/?k=${encodeURIComponent(TOKEN)}` }),
      reason: `I will use the key ${TOKEN.slice(0, 12)}`,
      actions: ['approve', 'deny'],
      requestedBy: { id: 'u1', name: 'Ada' },
      expiresAt: Date.now() + 60_000,
    };
    await outbox.sendApproval(CHAT, prompt);
    const [shown] = channel.platform.approvals;
    expect(JSON.stringify(shown!.prompt)).not.toContain(TOKEN.slice(0, 8));
    expect(shown!.prompt.reason).toBe('I will use the key [redacted]');
  });
});
