import { describe, expect, it } from 'vitest';
import { startFakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, startChannel } from './helpers.js';

describe('Telegram per-chat pacing (the production default)', () => {
  it('delivers every part of a long answer, in order, with the throttler on', async () => {
    const fake = await startFakeTelegram();
    const harness = await startChannel(fake, { options: { throttle: true } });
    try {
      const chat = { channel: 'telegram', chatId: String(ALICE.id) };
      const started = Date.now();
      const sent = await harness.channel.send(chat, `${'one '.repeat(900)}\n\n${'two '.repeat(900)}`);
      expect(sent.ids).toHaveLength(2);
      expect(fake.chatMessages(ALICE.id).map((m) => m.plainText.slice(0, 3))).toEqual(['one', 'two']);
      // Telegram allows about one message per second in a chat; the throttler spaces them.
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      await harness.channel.stop();
      await fake.close();
    }
  });
});
