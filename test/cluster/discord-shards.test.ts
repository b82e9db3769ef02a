/**
 * Discord's gateway shards shared out among the instances of a cluster: two
 * Discord channels, each on its own cluster node (a real Redis election with a
 * short lease TTL), against one fake Discord. Each instance holds its share of
 * the shards and receives only their guilds' messages; an instance that dies
 * without giving its shards back has them taken up by the other within a few
 * TTLs; an instance that holds no shard stands by, ready, and still sends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordChannel } from '../../src/channels/discord/adapter.js';
import { chatInfoOf } from '../../src/channels/discord/chat.js';
import type { InboundMessage } from '../../src/channels/types.js';
import { ClusterMembers } from '../../src/cluster/members.js';
import { ClusterNode } from '../../src/cluster/node.js';
import { RedisElection } from '../../src/cluster/redis-election.js';
import { DiscordConfigSchema } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { EventReader, testDeps } from '../channels/discord/harness.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';
import { startFakeDiscord, type FakeDiscord, type FakeUser } from '../fakes/discord/index.js';


/** Database 14 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url: redisUrl } = testRedisDb(14);
const LEASE_TTL_MS = 1_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One instance: its cluster node and its Discord channel. */
interface Instance {
  id: string;
  channel: DiscordChannel;
  events: EventReader;
  /** Dies without giving anything back: its Redis connections close, its leases and entry lapse. */
  die(): void;
}

async function startInstance(discord: FakeDiscord, id: string): Promise<Instance> {
  const node = await ClusterNode.connect(redisUrl(), id, LEASE_TTL_MS, silentLogger);
  const members = new ClusterMembers(node, silentLogger, 'discord');
  await members.join();
  const election = new RedisElection(node, silentLogger, members);
  const config = DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl });
  const channel = new DiscordChannel(config, testDeps({ election }), { balanceEveryMs: 200 });
  cleanups.push(async () => {
    await channel.stop();
    await members.leave();
    node.close();
  });
  await channel.start();
  return { id, channel, events: new EventReader(channel.events()), die: () => node.close() };
}

async function startFake(shards: number): Promise<FakeDiscord> {
  await flushDb(redisUrl());
  const discord = await startFakeDiscord({ shards });
  cleanups.push(() => discord.close());
  return discord;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** A message that mentions the bot, in `channelId`. */
function mention(discord: FakeDiscord, channelId: string, author: FakeUser, text: string): void {
  discord.userMessage({ channelId, author, content: `<@${discord.bot.id}> ${text}`, mentions: [discord.bot] });
}

const textOf = (event: { type: string }) => (event as InboundMessage).text;

describe.skipIf(!available)(`Discord shards shared by two instances on Redis${skip}`, () => {
  it('gives each instance one of two shards, delivers each guild once, and moves a dead instance’s shard to the other', async () => {
    const discord = await startFake(2);
    const rooms = [0, 1].map((shard) => discord.createTextChannel(`room-${shard}`, discord.addGuild(`Guild ${shard}`, { shard: [shard, 2] }).id).id);
    const alice = discord.addMember('Alice');
    const a = await startInstance(discord, 'a');
    const b = await startInstance(discord, 'b');
    await waitFor(() => a.channel.shards().length === 1 && b.channel.shards().length === 1, 'each instance holds one shard');
    await waitFor(() => a.channel.health().ready && b.channel.health().ready, 'both are ready');
    expect([...a.channel.shards(), ...b.channel.shards()].sort()).toEqual([0, 1]);

    const holderOf = (shard: number) => (a.channel.shards().includes(shard) ? a : b);
    for (const shard of [0, 1]) mention(discord, rooms[shard]!, alice, `hello shard ${shard}`);
    for (const shard of [0, 1]) expect(textOf(await holderOf(shard).events.next())).toContain(`hello shard ${shard}`);
    // A shard's events come in order on its connection: a second copy at the holder would come before
    // the marker. The other instance has a connection of its own, not ordered with it: no shard has two.
    for (const shard of [0, 1]) mention(discord, rooms[shard]!, alice, `marker ${shard}`);
    for (const shard of [0, 1]) expect(textOf(await holderOf(shard).events.next())).toContain(`marker ${shard}`);
    expect(discord.connectedShards.map(([id]) => id).sort()).toEqual([0, 1]);
    expect(a.events.pending).toEqual([]);
    expect(b.events.pending).toEqual([]);

    const dead = holderOf(1);
    const survivor = dead === a ? b : a;
    dead.die();
    await waitFor(() => survivor.channel.shards().length === 2 && dead.channel.shards().length === 0, 'the survivor holds both shards', 6 * LEASE_TTL_MS);
    await waitFor(() => survivor.channel.health().ready, 'the survivor is ready');
    // The dead instance's socket closes once it has stopped the shard; the close reaches the gateway a moment later.
    await waitFor(() => discord.connectedShards.filter(([id]) => id === 1).length === 1, 'shard 1 has one connection, the survivor’s');
    expect(discord.connectedShards.filter(([id]) => id === 1)).toHaveLength(1);

    mention(discord, rooms[1]!, alice, 'after the failover');
    expect(textOf(await survivor.events.next())).toContain('after the failover');
    // The dead instance's connection is closed (one connection per shard, checked above): it gets nothing.
    mention(discord, rooms[1]!, alice, 'marker');
    expect(textOf(await survivor.events.next())).toContain('marker');
    expect(survivor.events.pending).toEqual([]);
    expect(dead.events.pending).toEqual([]);
  });

  it('takes no account of instances that do not run Discord: the one Discord instance holds every shard', async () => {
    const discord = await startFake(2);
    // Two other instances that run only Telegram, alive all along.
    for (const id of ['t1', 't2']) {
      const node = await ClusterNode.connect(redisUrl(), id, LEASE_TTL_MS, silentLogger);
      const members = new ClusterMembers(node, silentLogger, 'telegram');
      await members.join();
      cleanups.push(async () => {
        await members.leave();
        node.close();
      });
    }
    const a = await startInstance(discord, 'a');
    await waitFor(() => a.channel.shards().length === 2 && a.channel.health().ready, 'the Discord instance holds both shards');
    await settle();
    expect(a.channel.shards()).toEqual([0, 1]);
  });

  it('keeps an instance that holds no shard ready and able to send, and lets it take over when the holder dies', async () => {
    const discord = await startFake(1);
    const admin = discord.addMember('Admin', { roles: ['admin'] });
    const a = await startInstance(discord, 'a');
    await waitFor(() => a.channel.shards().length === 1, 'the first instance holds the shard');
    const b = await startInstance(discord, 'b');
    await settle();
    expect(b.channel.shards()).toEqual([]);
    expect(b.channel.health()).toEqual({ ready: true });

    const sent = await b.channel.send({ channel: 'discord', chatId: discord.general.id }, 'from the standby');
    expect(discord.message(sent.ids[0]!)?.content).toBe('from the standby');
    await b.channel.edit(sent, 'edited by the standby');
    expect(discord.message(sent.ids[0]!)?.content).toBe('edited by the standby');
    await b.channel.typing({ channel: 'discord', chatId: discord.general.id });
    const dm = discord.dmChannel(admin).id;
    await b.channel.send({ channel: 'discord', chatId: dm }, 'a DM from the standby');
    expect(discord.messagesIn(dm).map((message) => message.content)).toEqual(['a DM from the standby']);
    const guildChat = chatInfoOf({ channelId: discord.general.id, guildId: discord.guildId, channelName: 'general' });
    expect(await b.channel.isAdmin(guildChat, admin.id)).toBe(true);

    a.die();
    await waitFor(() => b.channel.shards().length === 1 && b.channel.health().ready, 'the standby holds the shard', 6 * LEASE_TTL_MS);
    discord.userMessage({ channelId: dm, author: admin, content: 'to the new holder' });
    expect(textOf(await b.events.next())).toBe('to the new holder');
  });
});
