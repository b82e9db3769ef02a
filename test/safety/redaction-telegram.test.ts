/**
 * Redaction end to end on a real channel: the app with the grammY-based
 * Telegram channel on the fake Bot API and the openai SDK on the fake model,
 * which streams a reply full of the bot token slowly enough for streaming
 * previews to cut it in the middle. No message, preview edit, log line or
 * request to the model may carry 8 characters or more of the token's beginning.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configuredSecrets, createApp, type App } from '../../src/app.js';
import { TelegramChannel } from '../../src/channels/telegram/adapter.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { startFakeLlm, textReply, type FakeLlm } from '../fakes/llm/server.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../fakes/telegram/index.js';
import { ALICE, dmOf, FAST_OPTIONS } from '../channels/telegram/helpers.js';

/** Every beginning of `secret` of at least 8 characters found in `text`, longest first. */
function leakedPrefixes(text: string, secret: string): string[] {
  const found: string[] = [];
  for (let length = secret.length; length >= 8; length--) if (text.includes(secret.slice(0, length))) found.push(secret.slice(0, length));
  return found;
}

/**
 * A reply of filler then numbered copies of the token (numbered, or the loop
 * guard would cut it as a degenerate repetition), streamed in chunks of one
 * copy's length and offset so that every chunk ends 20 characters into a
 * token: whenever the presenter shows a preview, it shows half a token.
 */
function tokenHeavyReply(token: string): { content: string; chunkSize: number } {
  const copies = Array.from({ length: 55 }, (_, i) => `${token} #${i + 10}, `);
  const size = copies[0]!.length;
  const filler = 'Here is what I found in the settings you asked about. '.repeat(20).slice(0, 6 * size - 20);
  return { content: filler + copies.join(''), chunkSize: size };
}

describe('redaction on Telegram with streaming previews', () => {
  let telegram: FakeTelegram;
  let llm: FakeLlm;
  let app: App | undefined;
  let dir: string;
  const logLines: string[] = [];

  beforeEach(async () => {
    telegram = await startFakeTelegram();
    llm = await startFakeLlm();
    dir = mkdtempSync(join(tmpdir(), 'pincer-redaction-'));
    logLines.length = 0;
  });

  afterEach(async () => {
    await app?.stop('test over');
    app = undefined;
    await llm.close();
    await telegram.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never shows, logs or sends to the model a beginning of the bot token', async () => {
    const token = telegram.token;
    const reply = tokenHeavyReply(token);
    // 50 ms a chunk: the reply streams for about 3 s, long enough for a first preview and one edit.
    llm.enqueue(textReply(reply.content, { chunkSize: reply.chunkSize, chunkDelayMs: 50 }), textReply('Noted.'));
    const config = parseConfig({
      dataDir: dir,
      owners: [`telegram:${ALICE.id}`],
      telegram: { token, apiRoot: telegram.apiRoot },
      llm: { baseUrl: llm.url, apiKey: 'sk-local-model-key-4242', model: 'fake-model', stream: true, maxRetries: 0 },
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const log = createLogger({ level: 'trace', pretty: false, secrets: configuredSecrets(config), destination: sink });
    app = await createApp({
      config,
      log,
      channels: [{ name: 'telegram', create: (deps) => new TelegramChannel(config.telegram, deps, FAST_OPTIONS) }],
    });
    await app.start();

    telegram.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: `Does my bot token start with ${token.slice(0, 14)}?` });
    // The final edit ends the preview's trailing ellipsis.
    const posts = () => telegram.calls.filter((call) => call.method === 'sendMessage' || call.method === 'editMessageText');
    await waitFor(() => posts().some((call) => call.method === 'editMessageText' && !String(call.payload.text).endsWith('…')), 15_000, 'the final answer');
    telegram.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'Thanks.' });
    await waitFor(() => posts().some((call) => String(call.payload.text).includes('Noted.')), 10_000, 'the second answer');

    const previews = posts().filter((call) => String(call.payload.text).endsWith('…'));
    // At least two previews (the first post and an edit) came while the token was streaming.
    expect(previews.length).toBeGreaterThanOrEqual(2);
    for (const call of posts()) expect(leakedPrefixes(String(call.payload.text), token), `${call.method}`).toEqual([]);
    expect(posts().some((call) => String(call.payload.text).includes('[redacted]'))).toBe(true);

    expect(llm.requests).toHaveLength(2);
    for (const request of llm.requests) expect(leakedPrefixes(JSON.stringify(request.messages), token)).toEqual([]);
    // The second request carries the first answer back: it was redacted, not dropped.
    expect(JSON.stringify(llm.requests[1]!.messages)).toContain('Here is what I found');

    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(leakedPrefixes(line, token)).toEqual([]);
  }, 30_000);
});
