import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatAddress } from '../../../src/channels/types.js';
import type { RecordedRequest } from '../../fakes/discord/index.js';
import { startHarness, type Harness } from './harness.js';


/** A long answer: prose paragraphs around a long code block, every line numbered. */
function longAnswer(): { text: string; lines: string[] } {
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) lines.push(`Paragraph ${i}: ${'words and more words '.repeat(6).trim()}.`, '');
  lines.push('```ts');
  for (let i = 0; i < 120; i++) lines.push(`const value${i} = compute(${i}); // line ${i} of the code block`);
  lines.push('```', '', 'That is the whole answer.');
  const text = lines.join('\n');
  return { text, lines: lines.filter((line) => line.trim() && !line.startsWith('```')) };
}

const posts = (requests: RecordedRequest[], channelId: string) =>
  requests.filter((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages`);

describe('discord outbound messages', () => {
  let h: Harness;
  let chat: ChatAddress;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const freshChat = () => {
    chat = { channel: 'discord', chatId: h.discord.createTextChannel().id };
    return chat;
  };
  const visible = (id: string) => h.discord.message(id)!;

  it('delivers a 10,000-character answer complete, in parts of at most 2,000 with balanced code fences', async () => {
    const { text, lines } = longAnswer();
    expect(text.length).toBeGreaterThan(10_000);
    const sent = await h.channel.send(freshChat(), text);
    const parts = sent.ids.map((id) => visible(id).content);
    expect(parts.length).toBeGreaterThanOrEqual(6);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(2000);
      expect(part.split('\n').filter((line) => line.startsWith('```')).length % 2).toBe(0);
    }
    const received = parts.join('\n').split('\n').filter((line) => line.trim() && !line.startsWith('```'));
    expect(received).toEqual(lines);
    expect(h.discord.messagesIn(chat.chatId).map((message) => message.id)).toEqual(sent.ids);
  });

  it('does not post an answer twice when it is sent again under the same name (a successor resuming it)', async () => {
    const { text } = longAnswer();
    const first = await h.channel.send(freshChat(), text, { idempotencyKey: 'answer:discord:1:1700000000000' });
    const again = await h.channel.send(chat, text, { idempotencyKey: 'answer:discord:1:1700000000000' });
    expect(again.ids).toEqual(first.ids);
    expect(h.discord.messagesIn(chat.chatId).map((message) => message.id)).toEqual(first.ids);
    // Another answer, even with the same text, is another message.
    const other = await h.channel.send(chat, text, { idempotencyKey: 'answer:discord:1:1700000000001' });
    expect(other.ids.some((id) => first.ids.includes(id))).toBe(false);
    expect(h.discord.messagesIn(chat.chatId)).toHaveLength(first.ids.length * 2);
  });

  it('sends without pinging anyone', async () => {
    const sent = await h.channel.send(freshChat(), '@everyone the key is here');
    const [request] = posts(h.discord.requests, chat.chatId);
    expect(request!.body!.allowed_mentions).toEqual({ parse: [], replied_user: false });
    expect(visible(sent.ids[0]!).content).toBe('@everyone the key is here');
  });

  it('replies to a message when asked', async () => {
    freshChat();
    const question = h.discord.userMessage({ channelId: chat.chatId, author: h.discord.addMember('Asker'), content: 'q?' });
    await h.channel.send(chat, 'answer', { replyTo: question.id });
    const [request] = posts(h.discord.requests, chat.chatId);
    expect(request!.body!.message_reference).toMatchObject({ message_id: question.id, fail_if_not_exists: false });
  });

  it('edits parts in place, sends extra parts and deletes surplus ones', async () => {
    const first = await h.channel.send(freshChat(), 'short start');
    const grown = await h.channel.edit(first, `${'a'.repeat(1500)}\n\n${'b'.repeat(1500)}\n\n${'c'.repeat(1500)}`);
    expect(grown.ids[0]).toBe(first.ids[0]);
    expect(grown.ids).toHaveLength(3);
    expect(grown.ids.map((id) => visible(id).content[0])).toEqual(['a', 'b', 'c']);

    const shrunk = await h.channel.edit(grown, `${'a'.repeat(1500)}\n\n${'z'.repeat(800)}`);
    expect(shrunk.ids).toEqual(grown.ids.slice(0, 2));
    expect(visible(shrunk.ids[1]!).content).toBe('z'.repeat(800));
    expect(visible(grown.ids[2]!).deleted).toBe(true);
  });

  it('does not re-send parts whose text did not change', async () => {
    const sent = await h.channel.send(freshChat(), `${'a'.repeat(1500)}\n\n${'b'.repeat(600)}`);
    expect(sent.ids).toHaveLength(2);
    await h.channel.edit(sent, `${'a'.repeat(1500)}\n\n${'b'.repeat(700)}`);
    const patches = h.discord.requests.filter((r) => r.method === 'PATCH' && r.path.startsWith(`/channels/${chat.chatId}/`));
    expect(patches.map((r) => r.path)).toEqual([`/channels/${chat.chatId}/messages/${sent.ids[1]}`]);
  });

  it('shows the typing indicator', async () => {
    await h.channel.typing(freshChat());
    expect(h.discord.requests.some((r) => r.method === 'POST' && r.path === `/channels/${chat.chatId}/typing`)).toBe(true);
  });

  it('waits out a 429 on message create and delivers the message exactly once', async () => {
    freshChat();
    h.discord.failNext('POST', `/channels/${chat.chatId}/messages`, { retryAfter: 1 });
    const started = Date.now();
    const sent = await h.channel.send(chat, 'survives the rate limit');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(posts(h.discord.requests, chat.chatId).map((r) => r.status)).toEqual([429, 200]);
    const delivered = h.discord.messagesIn(chat.chatId).filter((m) => m.content === 'survives the rate limit');
    expect(delivered.map((m) => m.id)).toEqual(sent.ids);
  });

  it('does not duplicate a message whose response was lost: the retry carries the same nonce', async () => {
    freshChat();
    h.discord.failNext('POST', `/channels/${chat.chatId}/messages`, { status: 502, afterHandling: true });
    const sent = await h.channel.send(chat, 'sent once');
    const attempts = posts(h.discord.requests, chat.chatId);
    expect(attempts.map((r) => r.status)).toEqual([502, 200]);
    expect(attempts[0]!.body!.nonce).toBe(attempts[1]!.body!.nonce);
    expect(attempts[0]!.body!.enforce_nonce).toBe(true);
    expect(h.discord.messagesIn(chat.chatId).map((m) => m.id)).toEqual(sent.ids);
  });

  it('fails with a ChannelError for a channel that does not exist', async () => {
    await expect(h.channel.send({ channel: 'discord', chatId: '123' }, 'hello')).rejects.toMatchObject({ name: 'ChannelError', channel: 'discord' });
  });
});
