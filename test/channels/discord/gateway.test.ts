import { GatewayIntentBits } from 'discord.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DiscordChannel } from '../../../src/channels/discord/adapter.js';
import type { InboundMessage } from '../../../src/channels/types.js';
import { DiscordConfigSchema } from '../../../src/config/schema.js';
import { startFakeDiscord, type FakeUser } from '../../fakes/discord/index.js';
import { startHarness, testDeps } from './harness.js';

describe('discord gateway', () => {
  it('identifies with the guild, guild message, DM and message content intents', async () => {
    const h = await startHarness();
    try {
      const needed =
        GatewayIntentBits.Guilds | GatewayIntentBits.GuildMessages | GatewayIntentBits.DirectMessages | GatewayIntentBits.MessageContent;
      expect(h.discord.identifies).toHaveLength(1);
      expect(h.discord.identifies[0]!.intents & needed).toBe(needed);
    } finally {
      await h.close();
    }
  });

  it('survives a dropped connection: resumes and keeps emitting new messages, including ones sent meanwhile', async () => {
    let alice!: FakeUser;
    const h = await startHarness({ prepare: (discord) => void (alice = discord.addMember('Alice')) });
    try {
      const dm = h.discord.dmChannel(alice).id;
      h.discord.userMessage({ channelId: dm, author: alice, content: 'before' });
      expect((await h.events.next<InboundMessage>()).text).toBe('before');

      h.discord.dropGateway(4000);
      await h.discord.waitFor(() => !h.discord.connected);
      h.discord.userMessage({ channelId: dm, author: alice, content: 'while disconnected' });
      await h.discord.waitFor(() => h.discord.resumes === 1, 10_000);
      h.discord.userMessage({ channelId: dm, author: alice, content: 'after' });

      expect((await h.events.next<InboundMessage>()).text).toBe('while disconnected');
      expect((await h.events.next<InboundMessage>()).text).toBe('after');
      expect(h.discord.identifies).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('ends the event stream on stop', async () => {
    const h = await startHarness();
    const iterator = h.channel.events()[Symbol.asyncIterator]();
    await h.close();
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
  });

  it('fails to start with a ChannelError when the token is refused, without logging it', async () => {
    const discord = await startFakeDiscord();
    const lines: string[] = [];
    const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
    const config = DiscordConfigSchema.parse({ token: 'wrong-token-abcdef', apiUrl: discord.apiUrl });
    const channel = new DiscordChannel(config, testDeps({ log }));
    try {
      await expect(channel.start()).rejects.toMatchObject({ name: 'ChannelError', channel: 'discord' });
      expect(lines.join('\n')).not.toContain('wrong-token-abcdef');
    } finally {
      await channel.stop();
      await discord.close();
    }
  });

  it('fails to start, saying so, when the Message Content intent is not enabled for the bot', async () => {
    const discord = await startFakeDiscord({ disallowedIntents: GatewayIntentBits.MessageContent });
    const channel = new DiscordChannel(DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl }), testDeps());
    try {
      await expect(channel.start()).rejects.toThrow(/disallowed intents/i);
    } finally {
      await channel.stop();
      await discord.close();
    }
  });

  it('works again after a restart: a new channel instance on the same fake', async () => {
    const discord = await startFakeDiscord();
    const alice = discord.addMember('Alice');
    const config = DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl });
    try {
      const first = new DiscordChannel(config, testDeps());
      await first.start();
      await first.stop();
      const second = new DiscordChannel(config, testDeps());
      await second.start();
      const events = second.events()[Symbol.asyncIterator]();
      discord.userMessage({ channelId: discord.dmChannel(alice).id, author: alice, content: 'still there?' });
      expect((await events.next()).value).toMatchObject({ type: 'message', text: 'still there?' });
      await second.stop();
      expect(discord.identifies).toHaveLength(2);
    } finally {
      await discord.close();
    }
  });
});
