/**
 * The fake Discord's sharding, against the real discord.js: each gateway
 * connection gets the guilds and events of its own shard only, DMs go to
 * shard 0; and one process with a configured shard count runs them all.
 */
import { Events, type Client, type Message } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiscordClient } from '../../../src/channels/discord/client.js';
import { connectClient } from '../../../src/channels/discord/connect.js';
import type { InboundMessage } from '../../../src/channels/types.js';
import { DiscordConfigSchema } from '../../../src/config/schema.js';
import { shardOf, startFakeDiscord, type FakeDiscord } from '../../fakes/discord/index.js';
import { startHarness } from './harness.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakeWithTwoShards(): Promise<FakeDiscord> {
  const discord = await startFakeDiscord({ shards: 2 });
  cleanups.push(() => discord.close());
  return discord;
}

/** A client of shard `id` of 2, logged in, and the texts of the messages it receives. */
async function shardClient(discord: FakeDiscord, id: number): Promise<{ client: Client; texts: string[] }> {
  const config = DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl });
  const client = createDiscordClient(config, { ids: [id], count: 2 });
  const texts: string[] = [];
  client.on(Events.MessageCreate, (message: Message) => void texts.push(message.content));
  cleanups.push(() => client.destroy());
  await connectClient(client, discord.token, 10_000);
  return { client, texts };
}

describe('the fake Discord with two shards', () => {
  it('recommends its shard count, and sends each connection only the guilds and messages of its shard; DMs on shard 0', async () => {
    const discord = await fakeWithTwoShards();
    const zero = discord.addGuild('Zero', { shard: [0, 2] });
    const one = discord.addGuild('One', { shard: [1, 2] });
    const inZero = discord.createTextChannel('zero-general', zero.id);
    const inOne = discord.createTextChannel('one-general', one.id);
    const alice = discord.addMember('Alice');
    const info = await fetch(`${discord.apiUrl}/v10/gateway/bot`, { headers: { authorization: `Bot ${discord.token}` } });
    expect(await info.json()).toMatchObject({ shards: 2 });
    const a = await shardClient(discord, 0);
    const b = await shardClient(discord, 1);

    expect(discord.identifies.map((identify) => identify.shard)).toEqual([
      [0, 2],
      [1, 2],
    ]);
    const mainShard = shardOf(discord.guildId, 2);
    expect([...a.client.guilds.cache.keys()].sort()).toEqual([zero.id, ...(mainShard === 0 ? [discord.guildId] : [])].sort());
    expect([...b.client.guilds.cache.keys()].sort()).toEqual([one.id, ...(mainShard === 1 ? [discord.guildId] : [])].sort());

    discord.userMessage({ channelId: inZero.id, author: alice, content: 'to zero' });
    discord.userMessage({ channelId: inOne.id, author: alice, content: 'to one' });
    discord.userMessage({ channelId: discord.dmChannel(alice).id, author: alice, content: 'a dm' });
    // A shard's events come in order on its connection: one sent to the wrong shard would come before its marker.
    discord.userMessage({ channelId: inZero.id, author: alice, content: 'marker zero' });
    discord.userMessage({ channelId: inOne.id, author: alice, content: 'marker one' });
    await discord.waitFor(() => a.texts.includes('marker zero') && b.texts.includes('marker one'));
    expect(a.texts).toEqual(['to zero', 'a dm', 'marker zero']);
    expect(b.texts).toEqual(['to one', 'marker one']);
  });

  it('refuses an IDENTIFY for a shard outside the count', async () => {
    const discord = await fakeWithTwoShards();
    const config = DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl });
    const client = createDiscordClient(config, { ids: [2], count: 2 });
    cleanups.push(() => client.destroy());
    await expect(connectClient(client, discord.token, 3_000)).rejects.toMatchObject({ name: 'ChannelError' });
  });
});

describe('one process with a configured shard count', () => {
  it('runs every shard in its one client and receives the messages of all guilds', async () => {
    let inZero = '';
    let inOne = '';
    const h = await startHarness({
      config: { shardCount: 2 },
      prepare: (discord) => {
        inZero = discord.createTextChannel('zero-general', discord.addGuild('Zero', { shard: [0, 2] }).id).id;
        inOne = discord.createTextChannel('one-general', discord.addGuild('One', { shard: [1, 2] }).id).id;
      },
    });
    cleanups.push(() => h.close());
    expect(h.channel.shards()).toEqual([0, 1]);
    expect(h.channel.health()).toEqual({ ready: true });
    const alice = h.discord.addMember('Alice');
    h.discord.userMessage({ channelId: inZero, author: alice, content: '<@bot> zero', mentions: [h.discord.bot] });
    h.discord.userMessage({ channelId: inOne, author: alice, content: '<@bot> one', mentions: [h.discord.bot] });
    const texts = [(await h.events.next<InboundMessage>()).text, (await h.events.next<InboundMessage>()).text];
    expect(texts.sort()).toEqual(['one', 'zero'].map((word) => expect.stringContaining(word)));
  });
});
