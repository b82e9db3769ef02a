import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, dmOf, startChannel, type Harness } from './helpers.js';

/** A port that was free a moment ago (the webhook URL must name the port before the server binds it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Telegram webhook mode', () => {
  let fake: FakeTelegram;
  let harness: Harness;
  let url: string;
  const SECRET = 'webhook-secret_123';

  beforeEach(async () => {
    fake = await startFakeTelegram();
    const port = await freePort();
    url = `http://127.0.0.1:${port}/tg-hook`;
    harness = await startChannel(fake, {
      config: { mode: 'webhook', webhook: { url, host: '127.0.0.1', port, path: '/tg-hook', secretToken: SECRET } },
    });
  });

  afterEach(async () => {
    await harness.channel.stop();
    await fake.close();
  });

  it('registers the webhook with its secret and does not poll', () => {
    expect(fake.webhook).toEqual({ url, secretToken: SECRET });
    expect(fake.calls.some((call) => call.method === 'getUpdates')).toBe(false);
  });

  it('accepts a POST with the right secret token and emits its event', async () => {
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'via webhook' });
    const event = await harness.events.next<InboundMessage>();
    expect(event).toMatchObject({ type: 'message', text: 'via webhook', chat: { chatId: String(ALICE.id), kind: 'dm' } });
    await waitFor(() => fake.webhookDeliveries.length > 0, 2000, 'delivery');
    expect(fake.webhookDeliveries[0]!.status).toBe(200);
  });

  it('rejects a POST with a wrong or missing secret token and emits nothing', async () => {
    const update = { update_id: 77, message: { message_id: 1, date: 1, chat: dmOf(ALICE), from: ALICE, text: 'forged' } };
    for (const headers of [{ 'X-Telegram-Bot-Api-Secret-Token': 'wrong' }, {}] as Record<string, string>[]) {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(update) });
      await response.arrayBuffer();
      expect([401, 403]).toContain(response.status);
    }
    // A forged update is refused before its event is made; a real one after them is the marker.
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    expect(harness.events.seen.map((e) => (e.type === 'message' ? e.text : e.type))).toEqual(['marker']);
  });

  it('answers other paths with 404', async () => {
    const response = await fetch(url.replace('/tg-hook', '/other'), { method: 'POST', body: '{}' });
    await response.arrayBuffer();
    expect(response.status).toBe(404);
  });
});
