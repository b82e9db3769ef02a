/**
 * Gateway shards shared out among instances, with an election held in memory
 * (the Redis one is exercised in test/cluster/discord-shards.test.ts): the
 * shares even out when an instance joins, a lost shard's client is closed at
 * once and the other instance takes the shard up, and the health names the
 * held shards that are not ready.
 */
import { Status, type Client } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordChannel } from '../../../src/channels/discord/adapter.js';
import { heldShardsHealth } from '../../../src/channels/discord/health.js';
import { shardDuty } from '../../../src/channels/discord/shard-duties.js';
import type { InboundMessage } from '../../../src/channels/types.js';
import type { Election, Leadership } from '../../../src/channels/election.js';
import { DiscordConfigSchema } from '../../../src/config/schema.js';
import { startFakeDiscord, waitFor, type FakeDiscord } from '../../fakes/discord/index.js';
import { EventReader, testDeps } from './harness.js';

/** Duties held in memory; a campaign looks every 20 ms; `alive` members count as peers, and only they win. */
class MemoryElectorate {
  private readonly holders = new Map<string, { member: string; lost: AbortController }>();
  readonly alive = new Set<string>();

  member(member: string): Election {
    this.alive.add(member);
    return { campaign: (duty, signal) => this.campaign(member, duty, signal), peers: () => Promise.resolve(this.alive.size) };
  }

  /** `member` dies: it drops out, and its duties lapse. */
  kill(member: string): void {
    this.alive.delete(member);
    for (const [duty, holder] of this.holders) {
      if (holder.member !== member) continue;
      this.holders.delete(duty);
      holder.lost.abort(new Error('lease lapsed'));
    }
  }

  private async campaign(member: string, duty: string, signal: AbortSignal): Promise<Leadership> {
    for (;;) {
      signal.throwIfAborted();
      if (this.alive.has(member) && !this.holders.has(duty)) {
        const lost = new AbortController();
        this.holders.set(duty, { member, lost });
        return { lost: lost.signal, resign: async () => void (this.holders.get(duty)?.lost === lost && this.holders.delete(duty)) };
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Each step's time limit: connecting a shard's client takes a few seconds on a loaded machine. */
const SLOW_MACHINE_MS = 15_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startInstance(discord: FakeDiscord, election: Election): Promise<{ channel: DiscordChannel; events: EventReader }> {
  const config = DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl });
  const channel = new DiscordChannel(config, testDeps({ election }), { balanceEveryMs: 50 });
  cleanups.push(() => channel.stop());
  await channel.start();
  return { channel, events: new EventReader(channel.events()) };
}

describe('discord shards in a cluster', () => {
  it('names each shard duty by its number and the count', () => {
    expect(shardDuty(3, 8)).toBe('discord-shard-3-of-8');
  });

  it('evens the shares out when an instance joins, and takes up a dead instance’s shard', async () => {
    const discord = await startFakeDiscord({ shards: 2 });
    cleanups.push(() => discord.close());
    const room = discord.createTextChannel('room', discord.addGuild('One', { shard: [1, 2] }).id).id;
    const alice = discord.addMember('Alice');
    const electorate = new MemoryElectorate();
    const a = await startInstance(discord, electorate.member('a'));
    await waitFor(() => a.channel.shards().length === 2, SLOW_MACHINE_MS);
    const b = await startInstance(discord, electorate.member('b'));
    await waitFor(() => a.channel.shards().length === 1 && b.channel.shards().length === 1, SLOW_MACHINE_MS);
    await waitFor(() => discord.connectedShards.length === 2, SLOW_MACHINE_MS);

    const [survivor, dead, deadName] = a.channel.shards()[0] === 1 ? [b, a, 'a'] : [a, b, 'b'];
    electorate.kill(deadName);
    await waitFor(() => dead.channel.shards().length === 0 && survivor.channel.shards().length === 2, SLOW_MACHINE_MS);
    await waitFor(() => survivor.channel.health().ready && discord.connectedShards.length === 2, SLOW_MACHINE_MS);
    discord.userMessage({ channelId: room, author: alice, content: `<@${discord.bot.id}> still there?`, mentions: [discord.bot] });
    expect((await survivor.events.next<InboundMessage>(undefined, SLOW_MACHINE_MS)).text).toContain('still there?');
    expect(dead.channel.health()).toEqual({ ready: true });
  }, 60_000);

  it('is ready holding no shard, and names the held shards that are not ready', () => {
    const client = (statuses: [number, Status][]) => ({ ws: { shards: new Map(statuses.map(([id, status]) => [id, { id, status }])) } }) as unknown as Client;
    expect(heldShardsHealth(new Map())).toEqual({ ready: true });
    expect(heldShardsHealth(new Map([[0, client([[0, Status.Ready]])]]))).toEqual({ ready: true });
    const held = new Map([
      [0, client([[0, Status.Ready]])],
      [1, client([[1, Status.Resuming]])],
      [2, client([])],
    ]);
    expect(heldShardsHealth(held)).toEqual({ ready: false, reason: 'discord: gateway shard 1 resuming, shard 2 connecting' });
  });
});
