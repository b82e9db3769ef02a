/**
 * A gateway connection that stops delivering without closing (SPEC section
 * 15): Discord no longer acknowledges heartbeats nor sends events, the socket
 * stays open. The heartbeat watchdog finds it, the channel reports the gateway
 * not ready meanwhile, resumes on a new socket, and the message written during
 * the stall arrives, then new ones.
 */
import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import type { FakeUser } from '../../fakes/discord/index.js';
import { startHarness } from './harness.js';

describe('discord: a gateway that stalls', () => {
  it('is found by the heartbeat watchdog: not ready meanwhile, resumed, and the messages arrive again', async () => {
    let alice!: FakeUser;
    // Heartbeats every 300 ms instead of Discord's 41 s, so that a stall is found in about a second.
    const h = await startHarness({ fake: { heartbeatIntervalMs: 300 }, prepare: (discord) => void (alice = discord.addMember('Alice')) });
    const reasons = new Set<string>();
    const watch = setInterval(() => {
      const health = h.channel.health();
      if (!health.ready) reasons.add(health.reason ?? '');
    }, 10);
    try {
      const dm = h.discord.dmChannel(alice).id;
      h.discord.userMessage({ channelId: dm, author: alice, content: 'before' });
      expect((await h.events.next<InboundMessage>()).text).toBe('before');
      expect(h.channel.health()).toEqual({ ready: true });

      h.discord.stallGateway();
      h.discord.userMessage({ channelId: dm, author: alice, content: 'during the stall' });
      expect((await h.events.next<InboundMessage>(() => true, 10_000)).text).toBe('during the stall');
      expect(h.discord.unansweredHeartbeats).toBeGreaterThan(0);
      expect(h.discord.resumes).toBe(1);
      expect(h.discord.identifies).toHaveLength(1);
      // Not ready while it reconnected, saying so.
      expect(reasons.size).toBeGreaterThan(0);
      for (const reason of reasons) expect(reason).toMatch(/^discord: gateway shard 0 (connecting|reconnecting|resuming)$/);

      h.discord.userMessage({ channelId: dm, author: alice, content: 'after' });
      expect((await h.events.next<InboundMessage>()).text).toBe('after');
      await h.discord.waitFor(() => h.channel.health().ready, 5_000);
    } finally {
      clearInterval(watch);
      await h.close();
    }
  }, 20_000);
});
