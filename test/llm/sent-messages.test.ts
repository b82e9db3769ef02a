import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { SentMessages } from '../../src/llm/sent-messages.js';
import { redactMessages } from '../../src/llm/redact-messages.js';
import { toWireMessage } from '../../src/llm/wire.js';

const conversation = (): ChatMessage[] => [
  { role: 'system', content: 'system sk-1' },
  { role: 'user', content: 'hi sk-1', name: 'ann' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 'read', arguments: '{"key":"sk-1"}' }] },
  { role: 'tool', toolCallId: 'a', content: 'found sk-1' },
  { role: 'assistant', content: 'done sk-1' },
];

describe('SentMessages', () => {
  it('sends what redacting and converting every message would', () => {
    const redact = (text: string) => text.replaceAll('sk-1', '[redacted]');
    const messages = conversation();
    const sent = new SentMessages(redact);
    const expected = redactMessages(messages, redact).map(toWireMessage);
    expect(sent.of(messages)).toEqual(expected);
    expect(sent.of(messages)).toEqual(expected);
    expect(JSON.stringify(expected)).not.toContain('sk-1');
  });

  it('redacts each message once across requests', () => {
    let calls = 0;
    const sent = new SentMessages((text) => {
      calls += 1;
      return text;
    });
    const messages = conversation();
    sent.of(messages);
    const first = calls;
    messages.push({ role: 'user', content: 'more' });
    sent.of(messages);
    expect(calls).toBe(first + 1);
  });

  it('converts a message again when it was changed in place', () => {
    const redact = (text: string) => text.replaceAll('sk-1', '[redacted]');
    const messages = conversation();
    const sent = new SentMessages(redact);
    sent.of(messages);
    (messages[3] as { content: string }).content = 'now sk-1 again';
    const assistant = messages[2] as { toolCalls: { arguments: string }[] };
    assistant.toolCalls[0]!.arguments = '{"other":"sk-1"}';
    (messages[1] as { name?: string }).name = 'bob';
    expect(sent.of(messages)).toEqual(redactMessages(messages, redact).map(toWireMessage));
  });

  it('sends an image after the text without redacting its bytes, and again when the image changed', () => {
    let redacted = '';
    const sent = new SentMessages((text) => {
      redacted += text;
      return text.replaceAll('sk-1', '[redacted]');
    });
    const dataUrl = `data:image/jpeg;base64,${'sk-1'.repeat(4)}`;
    const messages: ChatMessage[] = [{ role: 'user', content: 'look sk-1', images: [{ path: 'attachments/a.jpg', mimeType: 'image/jpeg', turn: 1, dataUrl }] }];
    expect(sent.of(messages)[0]!.content).toEqual([
      { type: 'text', text: 'look [redacted]' },
      { type: 'image_url', image_url: { url: dataUrl } },
    ]);
    expect(redacted).toBe('look sk-1');
    // Changed in place: the message is converted again.
    (messages[0] as { images: unknown[] }).images = [{ path: 'attachments/b.jpg', mimeType: 'image/png', turn: 1, dataUrl: 'data:image/png;base64,AAAA' }];
    expect(sent.of(messages)[0]!.content).toEqual([
      { type: 'text', text: 'look [redacted]' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ]);
  });

  it('sends an image without its bytes as nothing: the text alone', () => {
    const message: ChatMessage = { role: 'user', content: 'look', images: [{ path: 'attachments/a.jpg', mimeType: 'image/jpeg', turn: 1 }] };
    expect(toWireMessage(message)).toEqual({ role: 'user', content: 'look' });
  });

  it('converts without a redactor', () => {
    const messages = conversation();
    expect(new SentMessages().of(messages)).toEqual(messages.map(toWireMessage));
  });
});
