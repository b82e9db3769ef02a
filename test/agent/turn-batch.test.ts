import { describe, expect, it } from 'vitest';
import type { ChatKind, InboundMessage } from '../../src/channels/types.js';
import { joinsRunningTurn, takeTurnBatch } from '../../src/chat/turn-batch.js';
import { testDm, testGroup } from '../support/test-channel.js';

/** Messages `a1 b1 a2`: sender letter, then its number. */
function messages(kind: ChatKind, names: string): InboundMessage[] {
  const chat = kind === 'dm' ? testDm('a') : testGroup('g');
  return names.split(' ').map((name, i) => ({
    type: 'message',
    chat,
    sender: { id: name[0]!, name: name[0]!.toUpperCase() },
    receivedAt: i,
    messageId: String(i),
    text: name,
    mentionsBot: true,
    replyToBot: false,
    attachments: [],
  }));
}

const texts = (list: InboundMessage[]) => list.map((message) => message.text).join(' ');

describe('takeTurnBatch', () => {
  it.each([
    ['dm', 'a1 a2 a3', undefined, 'a1 a2 a3', ''],
    ['group', 'a1 a2 b1 a3', undefined, 'a1 a2', 'b1 a3'],
    ['group', 'b1 a1', undefined, 'b1', 'a1'],
    ['group', 'a1 b1', 'a', 'a1', 'b1'],
    ['group', 'b1 a1', 'a', '', 'b1 a1'],
  ] as const)('%s, waiting %s, speaker %s: reads %s, leaves %s', (kind, waiting, speaker, read, left) => {
    const queue = messages(kind, waiting);
    const batch = takeTurnBatch(queue, kind, speaker ? { id: speaker, name: speaker } : undefined);
    expect(texts(batch)).toBe(read);
    expect(texts(queue)).toBe(left);
  });
});

describe('joinsRunningTurn', () => {
  const ada = { id: 'a', name: 'A' };
  it.each([
    ['dm', 'a1', '', true],
    ['group', 'a1', '', true],
    ['group', 'b1', '', false],
    ['group', 'a1', 'b1', false],
  ] as const)('%s: %s arriving with [%s] waiting joins: %s', (kind, arriving, waiting, joins) => {
    expect(joinsRunningTurn(kind, ada, messages(kind, arriving)[0]!, waiting ? messages(kind, waiting) : [])).toBe(joins);
  });
});
