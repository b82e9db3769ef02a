import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageText, readableText } from '../../fakes/slack/index.js';
import { ALICE, DM_ALICE, GENERAL, startHarness, type Harness } from './harness.js';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness.close();
});

/** About 10,000 characters: numbered words in paragraphs, with a long code block in the middle. */
function longAnswer(): { markdown: string; tokens: string[] } {
  const tokens: string[] = [];
  const paragraph = (from: number) => {
    const words = Array.from({ length: 30 }, (_, i) => `word${from + i}`);
    tokens.push(...words);
    return words.join(' ');
  };
  const blocks: string[] = [];
  for (let p = 0; p < 20; p++) blocks.push(paragraph(p * 30));
  const code = Array.from({ length: 120 }, (_, i) => `codeline${i} = a < b && c;`);
  tokens.push(...code.map((line) => line.split(' ')[0]!));
  blocks.push(['```python', ...code, '```'].join('\n'));
  for (let p = 20; p < 35; p++) blocks.push(paragraph(p * 30));
  return { markdown: blocks.join('\n\n'), tokens };
}

function tokensOf(text: string): string[] {
  return text.split(/\s+/).filter((token) => /^(word|codeline)\d+$/.test(token));
}

describe('SlackChannel outbound messages', () => {
  it('delivers a 10,000-character answer complete, in parts that each fit a section block, code intact', async () => {
    const { fake, channel } = harness;
    const { markdown, tokens } = longAnswer();
    expect(markdown.length).toBeGreaterThan(10_000);
    const sent = await channel.send({ channel: 'slack', chatId: DM_ALICE }, markdown);
    const posted = fake.botMessages(DM_ALICE);
    expect(sent.ids).toEqual(posted.map((message) => message.ts));
    expect(posted.length).toBeGreaterThanOrEqual(4);
    for (const message of posted) {
      const section = messageText(message);
      expect(section.length).toBeLessThanOrEqual(3000);
      expect(message.text).toBe(section);
      expect(section.split('\n').filter((line) => line.startsWith('```')).length % 2).toBe(0);
    }
    const all = posted.map((message) => readableText(messageText(message))).join('\n');
    expect(tokensOf(all)).toEqual(tokens);
    expect(all).toContain('codeline7 = a < b && c;');
  });

  it('posts replies of a channel conversation into its thread', async () => {
    const { fake, channel } = harness;
    const root = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'question', mention: true });
    const sent = await channel.send({ channel: 'slack', chatId: GENERAL, subId: root.ts }, `${'long answer '.repeat(400)}`);
    expect(sent.chat).toEqual({ channel: 'slack', chatId: GENERAL, subId: root.ts });
    expect(sent.ids.length).toBe(2);
    for (const ts of sent.ids) expect(fake.workspace.message(GENERAL, ts)?.thread_ts).toBe(root.ts);
  });

  it('edits in place, posts parts an answer grew, and blanks parts it no longer needs', async () => {
    const { fake, channel } = harness;
    const chat = { channel: 'slack', chatId: GENERAL, subId: '1700000000.000001' };
    const first = await channel.send(chat, 'Thinking…');
    expect(first.ids).toHaveLength(1);

    const updatesBefore = fake.callsOf('chat.update').length;
    const grown = await channel.edit(first, `**Answer**\n\n${'alpha '.repeat(400)}\n\n${'beta '.repeat(400)}`);
    expect(grown.ids.length).toBeGreaterThanOrEqual(2);
    expect(grown.ids[0]).toBe(first.ids[0]);
    expect(readableText(messageText(fake.workspace.message(GENERAL, first.ids[0]!)!))).toMatch(/^Answer/);
    for (const ts of grown.ids.slice(1)) expect(fake.workspace.message(GENERAL, ts)?.thread_ts).toBe(chat.subId);

    const shrunk = await channel.edit(grown, '**Answer**\n\nshort in the end');
    expect(shrunk.ids).toEqual(grown.ids);
    const texts = shrunk.ids.map((ts) => readableText(messageText(fake.workspace.message(GENERAL, ts)!)));
    expect(texts[0]).toBe('Answer\n\nshort in the end');
    for (const text of texts.slice(1)) expect(text).toBe('');

    const updates = fake.callsOf('chat.update').length - updatesBefore;
    await channel.edit(shrunk, '**Answer**\n\nshort in the end');
    expect(fake.callsOf('chat.update').length - updatesBefore).toBe(updates);
  });

  it('resumes a named answer without posting again the parts that went out before, in a DM and in a thread', async () => {
    const { fake, channel } = harness;
    const { markdown } = longAnswer();
    const root = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'question two', mention: true });
    for (const chat of [{ channel: 'slack', chatId: DM_ALICE }, { channel: 'slack', chatId: GENERAL, subId: root.ts }]) {
      const before = fake.botMessages(chat.chatId).length;
      const key = `answer:slack:${chat.chatId}:1700000000000`;
      const first = await channel.send(chat, markdown, { idempotencyKey: key });
      expect(first.ids.length).toBeGreaterThanOrEqual(4);
      // The whole answer had gone out: nothing is posted again.
      const again = await channel.send(chat, markdown, { idempotencyKey: key, resumed: true });
      expect(again.ids).toEqual(first.ids);
      expect(fake.botMessages(chat.chatId)).toHaveLength(before + first.ids.length);
      // Another answer under another name is posted, even when resumed.
      const other = await channel.send(chat, 'a different answer', { idempotencyKey: `${key}1`, resumed: true });
      expect(first.ids).not.toContain(other.ids[0]);
      expect(fake.botMessages(chat.chatId)).toHaveLength(before + first.ids.length + 1);
    }
  });

  it('posts only the missing parts of a resumed answer that had gone out in part', async () => {
    const { fake, channel } = harness;
    const { markdown } = longAnswer();
    const chat = { channel: 'slack', chatId: DM_ALICE };
    const key = 'answer:slack:partial:1700000000000';
    const whole = await channel.send(chat, markdown, { idempotencyKey: key });
    // As if the sender had died after its first two parts: the rest never reached Slack.
    for (const ts of whole.ids.slice(2)) fake.workspace.removeMessage(DM_ALICE, ts);
    const kept = fake.botMessages(DM_ALICE).filter((message) => whole.ids.includes(message.ts)).length;
    expect(kept).toBe(2);
    const resumed = await channel.send(chat, markdown, { idempotencyKey: key, resumed: true });
    expect(resumed.ids.slice(0, 2)).toEqual(whole.ids.slice(0, 2));
    expect(resumed.ids).toHaveLength(whole.ids.length);
    expect(resumed.ids.slice(2).some((ts) => whole.ids.includes(ts))).toBe(false);
  });

  it('reports a platform refusal as a ChannelError', async () => {
    await expect(harness.channel.send({ channel: 'slack', chatId: 'C0MISSING' }, 'hi')).rejects.toMatchObject({
      name: 'ChannelError',
      channel: 'slack',
      message: expect.stringContaining('channel_not_found'),
    });
  });

  it('declares no typing indicator and does nothing when asked for one', async () => {
    const calls = harness.fake.calls.length;
    await harness.channel.typing({ channel: 'slack', chatId: DM_ALICE });
    expect(harness.channel.capabilities.typingIntervalMs).toBe(0);
    expect(harness.fake.calls.length).toBe(calls);
  });
});
