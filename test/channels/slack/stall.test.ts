/**
 * A Socket Mode connection that stops delivering without closing (SPEC
 * section 15): Slack no longer answers the client's pings nor sends events,
 * the socket stays open. The ping watchdog of the Socket Mode client finds it,
 * the channel reports the socket not ready meanwhile, connects again, and the
 * message written during the stall arrives, then new ones.
 */
import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import { ALICE, DM_ALICE, startHarness } from './harness.js';

describe('slack: a Socket Mode connection that stalls', () => {
  it('is found by the ping watchdog: not ready meanwhile, connected again, and the messages arrive again', async () => {
    const h = await startHarness();
    const reasons = new Set<string>();
    const watch = setInterval(() => {
      const health = h.channel.health();
      if (!health.ready) reasons.add(health.reason ?? '');
    }, 10);
    try {
      await h.fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'before' });
      await h.recorder.waitFor(1);
      expect(h.channel.health()).toEqual({ ready: true });

      h.fake.hub.stall();
      // Pongs stop: the client gives up on the socket after its 5 s ping timeout, and reconnects 5 s later.
      await h.fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'during the stall', ackTimeoutMs: 25_000 });
      await h.fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'after' });
      const texts = (await h.recorder.waitFor(3)).map((event) => (event as InboundMessage).text);
      expect(texts).toEqual(['before', 'during the stall', 'after']);
      expect(h.fake.socketConnections).toEqual({ open: 1, total: 2 });
      expect(h.channel.health()).toEqual({ ready: true });
      // Not ready from the moment the socket was given up (the client waits before it reconnects), saying so.
      expect([...reasons]).toContain('slack: Socket Mode socket closed; reconnecting');
      for (const reason of reasons) expect(reason).toMatch(/^slack: Socket Mode (disconnected|reconnecting|connecting|disconnecting|socket closed; reconnecting)$/);
    } finally {
      clearInterval(watch);
      await h.close();
    }
  }, 40_000);
});
