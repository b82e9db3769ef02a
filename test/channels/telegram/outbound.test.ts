import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelError } from '../../../src/errors.js';
import { renderParts } from '../../../src/channels/telegram/parts.js';
import type { ChatAddress } from '../../../src/channels/types.js';
import { parseTelegramHtml, startFakeTelegram, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, capturingLogger, startChannel, supergroup, type Harness } from './helpers.js';

const DM: ChatAddress = { channel: 'telegram', chatId: String(ALICE.id) };

/** About 10,000 characters of prose and code, every line unique so none can go missing unnoticed. */
function longAnswer(): { markdown: string; lines: string[] } {
  const lines: string[] = [];
  const blocks: string[] = [];
  for (let section = 0; blocks.join('\n\n').length < 10_000; section++) {
    const prose = `Paragraph ${section}: **bold ${section}** & <angle> text that explains step ${section} in some detail.`;
    const code = Array.from({ length: 25 }, (_, i) => `const value_${section}_${i} = compute(${i}) < limit && ok;`);
    lines.push(`Paragraph ${section}: bold ${section} & <angle> text that explains step ${section} in some detail.`, ...code);
    blocks.push(prose, ['```ts', ...code, '```'].join('\n'));
  }
  return { markdown: blocks.join('\n\n'), lines };
}

describe('Telegram outbound messages', () => {
  let fake: FakeTelegram;
  let harness: Harness;

  beforeEach(async () => {
    fake = await startFakeTelegram();
    harness = await startChannel(fake);
  });

  afterEach(async () => {
    await harness.channel.stop();
    await fake.close();
  });

  it('delivers a 10,000-character answer with code blocks complete, in valid parts of at most 4096 characters', async () => {
    const { markdown, lines } = longAnswer();
    expect(markdown.length).toBeGreaterThanOrEqual(10_000);
    const sent = await harness.channel.send(DM, markdown);

    const messages = fake.chatMessages(ALICE.id);
    expect(sent.ids).toEqual(messages.map((m) => String(m.messageId)));
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) {
      expect(message.parseMode).toBe('HTML');
      expect(message.text.length).toBeLessThanOrEqual(4096);
      expect(parseTelegramHtml(message.text).ok).toBe(true);
      // Code lines only ever appear inside a <pre> of their own part: blocks are closed and reopened.
      const outsidePre = message.text.replace(/<pre>[\s\S]*?<\/pre>/g, '');
      expect(outsidePre).not.toMatch(/const value_/);
    }
    const everything = messages.map((m) => m.plainText).join('\n');
    for (const line of lines) expect(everything).toContain(line);
    expect(messages.filter((m) => m.text.startsWith('<pre><code class="language-ts">')).length).toBeGreaterThan(0);
  });

  it('splits again when escaping makes a part longer than the limit', () => {
    const parts = renderParts('<&>'.repeat(3000));
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(part.html.length).toBeLessThanOrEqual(4096);
    expect(parts.map((p) => p.markdown).join('')).toBe('<&>'.repeat(3000));
  });

  it('resends a part as plain text when Telegram rejects its HTML', async () => {
    fake.failNext('sendMessage', { error_code: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0" });
    const sent = await harness.channel.send(DM, 'some **bold** claim');
    const [message] = fake.chatMessages(ALICE.id);
    expect(sent.ids).toEqual([String(message!.messageId)]);
    expect(message).toMatchObject({ text: 'some **bold** claim' });
    expect(message!.parseMode).toBeUndefined();
  });

  it('only falls back for the rejected part', async () => {
    fake.failNext('sendMessage', { error_code: 400, description: "Bad Request: can't parse entities: x" });
    await harness.channel.send(DM, `**first** ${'a '.repeat(1500)}\n\n**second** ${'b '.repeat(1500)}`);
    const [first, second] = fake.chatMessages(ALICE.id);
    expect(first!.parseMode).toBeUndefined();
    expect(second!.parseMode).toBe('HTML');
    expect(second!.text).toContain('<b>second</b>');
  });

  it('retries a 429 after retry_after and delivers the message exactly once', async () => {
    fake.failNext('sendMessage', { error_code: 429, description: 'Too Many Requests: retry after 1', retry_after: 1 });
    const started = Date.now();
    await harness.channel.send(DM, 'rate limited hello');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(fake.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(2);
    expect(fake.chatMessages(ALICE.id).map((m) => m.plainText)).toEqual(['rate limited hello']);
  });

  it('retries a Telegram server error with backoff and delivers the message once', async () => {
    fake.failNext('sendMessage', { error_code: 502, description: 'Bad Gateway' });
    await harness.channel.send(DM, 'after a server hiccup');
    expect(fake.chatMessages(ALICE.id).map((m) => m.plainText)).toEqual(['after a server hiccup']);
  });

  it('edits a part as plain text when Telegram rejects the HTML of the edit', async () => {
    const sent = await harness.channel.send(DM, 'draft');
    fake.failNext('editMessageText', { error_code: 400, description: "Bad Request: can't parse entities: x" });
    await harness.channel.edit(sent, 'final **answer**');
    expect(fake.chatMessages(ALICE.id)).toMatchObject([{ text: 'final **answer**', edits: 1 }]);
    expect(fake.chatMessages(ALICE.id)[0]!.parseMode).toBeUndefined();
  });

  it('retries a dropped connection and delivers the message once', async () => {
    fake.failNext('sendMessage', { drop: true }, 2);
    await harness.channel.send(DM, 'after a network blip');
    expect(fake.chatMessages(ALICE.id).map((m) => m.plainText)).toEqual(['after a network blip']);
  });

  it('fails with a ChannelError that does not contain the token when Telegram refuses', async () => {
    fake.failNext('sendMessage', { error_code: 403, description: 'Forbidden: bot was blocked by the user' });
    const error = await harness.channel.send(DM, 'hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect((error as Error).message).toContain('bot was blocked');
    expect((error as Error).message).not.toContain(fake.token);
  });

  it('edits parts in place, sends extra parts and removes surplus ones', async () => {
    const first = await harness.channel.send(DM, 'short start');
    const grown = await harness.channel.edit(first, `${'x '.repeat(1500)}\n\n${'y '.repeat(1500)}`);
    expect(grown.ids[0]).toBe(first.ids[0]);
    expect(grown.ids).toHaveLength(2);
    expect(fake.chatMessages(ALICE.id)).toHaveLength(2);

    const shrunk = await harness.channel.edit(grown, 'final *answer*');
    expect(shrunk.ids).toEqual([first.ids[0]]);
    const visible = fake.chatMessages(ALICE.id);
    expect(visible.map((m) => m.text)).toEqual(['final <i>answer</i>']);
  });

  it('ignores "message is not modified" when the edit changes nothing', async () => {
    const sent = await harness.channel.send(DM, 'same');
    await expect(harness.channel.edit(sent, 'same')).resolves.toEqual(sent);
    expect(fake.calls.filter((c) => c.method === 'editMessageText')).toHaveLength(1);
  });

  it('answers in reply to a message when asked', async () => {
    const group = supergroup();
    const { message } = fake.sendUserMessage({ chat: group, from: ALICE, text: '@pincer_test_bot hi' });
    await harness.channel.send({ channel: 'telegram', chatId: String(group.id) }, 'hello', { replyTo: String(message.message_id) });
    expect(fake.sent.at(-1)).toMatchObject({ replyTo: message.message_id, plainText: 'hello' });
  });

  it('shows typing with sendChatAction', async () => {
    await harness.channel.typing(DM);
    expect(fake.chatActions).toEqual([{ chatId: String(ALICE.id), action: 'typing' }]);
  });
});

describe('Telegram credentials in logs', () => {
  it('never logs the token when polling fails on the network', async () => {
    const fake = await startFakeTelegram();
    const lines: string[] = [];
    fake.failNext('getUpdates', { drop: true }, 6);
    const harness = await startChannel(fake, { deps: { log: capturingLogger(lines, [fake.token]) }, options: { networkRetryAttempts: 0 } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const failures = lines.filter((line) => line.includes('getUpdates failed'));
      expect(failures.length).toBeGreaterThan(0);
      // The network error quotes the request URL; the process logger redacts the configured token in it.
      expect(failures[0]).toContain('/bot[redacted]/getUpdates');
      expect(lines.join('\n')).not.toContain(fake.token);
    } finally {
      await harness.channel.stop();
      await fake.close();
    }
  });
});
