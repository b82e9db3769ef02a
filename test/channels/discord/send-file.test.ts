/**
 * A file the bot sends on Discord, through discord.js and the fake REST API:
 * one message with the file attached (multipart `files[0]` and
 * `payload_json` carrying the caption and a nonce), which Discord shows
 * inline when it is an image; the same name sent again is dropped by the
 * nonce; a 413 is a refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatAddress, OutboundFile } from '../../../src/channels/types.js';
import { ChannelError } from '../../../src/errors.js';
import { sha256Of, TINY_PNG } from '../../support/sent-files.js';
import { startHarness, type Harness } from './harness.js';

const CHART: OutboundFile = { name: 'chart.png', bytes: TINY_PNG, mimeType: 'image/png', as: 'photo', caption: 'the chart' };

describe('discord sendFile', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const freshChat = (): ChatAddress => ({ channel: 'discord', chatId: h.discord.createTextChannel().id });

  it('attaches the file to a message with the caption; the same name again posts nothing new', async () => {
    const chat = freshChat();
    const first = await h.channel.sendFile(chat, CHART, { idempotencyKey: 'file:discord:1:t1:abc' });
    const again = await h.channel.sendFile(chat, CHART, { idempotencyKey: 'file:discord:1:t1:abc' });
    expect(again.ids).toEqual(first.ids);
    const uploads = h.discord.uploads.filter((upload) => upload.channelId === chat.chatId);
    expect(uploads).toEqual([{ channelId: chat.chatId, messageId: first.ids[0], name: 'chart.png', size: TINY_PNG.length, sha256: sha256Of(TINY_PNG), contentType: 'image/png', caption: 'the chart', nonce: expect.any(String) }]);
  });

  it('a 413 from Discord is a refusal, not retried', async () => {
    const chat = freshChat();
    h.discord.failNext('POST', `/channels/${chat.chatId}/messages`, { status: 413, withFiles: true });
    const failure = await h.channel.sendFile(chat, CHART).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ChannelError);
    expect(failure).toMatchObject({ retryable: false });
    expect(h.discord.uploads.filter((upload) => upload.channelId === chat.chatId)).toEqual([]);
  });
});
