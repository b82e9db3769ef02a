import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import type { FakeUser } from '../../fakes/discord/index.js';
import { startHarness, type Harness } from './harness.js';

const isMessage = (event: { type: string }) => event.type === 'message';

describe('discord inbound messages', () => {
  let h: Harness;
  let alice: FakeUser;
  let bob: FakeUser;

  beforeAll(async () => {
    h = await startHarness();
    alice = h.discord.addMember('Alice');
    bob = h.discord.addMember('Bob');
  });
  afterAll(() => h.close());

  it('turns a DM into a dm message addressed to the bot, scoped globally', async () => {
    const dm = h.discord.dmChannel(alice);
    const sent = h.discord.userMessage({ channelId: dm.id, author: alice, content: 'hello there' });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event).toMatchObject({
      type: 'message',
      messageId: sent.id,
      text: 'hello there',
      chat: { channel: 'discord', chatId: dm.id, kind: 'dm', scope: 'global' },
      sender: { id: alice.id, name: 'Alice', isBot: false },
      mentionsBot: true,
      replyToBot: false,
    });
  });

  it("describes attachments with their id and CDN URL, and downloads them from it; a voice message is audio", async () => {
    const dm = h.discord.dmChannel(alice);
    h.discord.userMessage({
      channelId: dm.id,
      author: alice,
      content: 'files',
      files: [
        { name: 'notes.md', contentType: 'text/markdown; charset=utf-8', bytes: Buffer.from('# pelican') },
        { name: 'voice-message.ogg', contentType: 'audio/ogg', bytes: Buffer.from('OggS') },
      ],
    });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event.attachments).toEqual([
      { kind: 'document', name: 'notes.md', mimeType: 'text/markdown; charset=utf-8', sizeBytes: 9, fileId: expect.any(String), url: expect.stringMatching(/\/attachments\/.*\/notes\.md\?ex=.*&hm=/) },
      { kind: 'audio', name: 'voice-message.ogg', mimeType: 'audio/ogg', sizeBytes: 4, fileId: expect.any(String), url: expect.any(String) },
    ]);
    const bytes = await h.channel.fetchAttachment(event.attachments[0]!, { maxBytes: 1024, signal: AbortSignal.timeout(5_000) });
    expect(Buffer.from(bytes).toString()).toBe('# pelican');
  });

  it('fetches an attachment whose URL expired through a refreshed URL, and fails clearly for a file Discord no longer has', async () => {
    const dm = h.discord.dmChannel(alice);
    h.discord.userMessage({ channelId: dm.id, author: alice, content: 'old file', files: [{ name: 'old.md', contentType: 'text/markdown', bytes: Buffer.from('# kept') }] });
    const event = await h.events.next<InboundMessage>(isMessage);
    h.discord.expireAttachmentUrls();
    const limits = () => ({ maxBytes: 1024, signal: AbortSignal.timeout(5_000) });
    expect(Buffer.from(await h.channel.fetchAttachment(event.attachments[0]!, limits())).toString()).toBe('# kept');
    expect(h.discord.requests.filter((request) => request.path === '/attachments/refresh-urls')).toMatchObject([{ method: 'POST', status: 200 }]);
    const gone = { ...event.attachments[0]!, url: event.attachments[0]!.url!.replace('old.md', 'gone.md') };
    await expect(h.channel.fetchAttachment(gone, limits())).rejects.toMatchObject({ reason: 'failed', message: 'the file server answered 404' });
  });

  it('emits unaddressed guild messages as group context, keyed by channel and scoped to the guild', async () => {
    h.discord.userMessage({ channelId: h.discord.general.id, author: bob, content: 'just chatting' });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event).toMatchObject({
      text: 'just chatting',
      chat: { chatId: h.discord.general.id, kind: 'group', scope: `discord:guild:${h.discord.guildId}`, title: '#general (Pincer Test Guild)' },
      mentionsBot: false,
      replyToBot: false,
    });
  });

  it('flags a mention of the bot user and strips it from the text', async () => {
    const bot = h.discord.bot;
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: `<@${bot.id}> what time is it?`, mentions: [bot] });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event.mentionsBot).toBe(true);
    expect(event.text).toBe('what time is it?');
  });

  it("flags a mention of the bot's managed role", async () => {
    const role = h.discord.roleIds.bot;
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: `hey <@&${role}> help`, mentionRoleIds: [role] });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event.mentionsBot).toBe(true);
    expect(event.text).toBe('hey help');
  });

  it('does not count @everyone or @here as a mention of the bot', async () => {
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: '@everyone meeting now', mentionEveryone: true });
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: '@here anyone?', mentionEveryone: true });
    const everyone = await h.events.next<InboundMessage>(isMessage);
    const here = await h.events.next<InboundMessage>(isMessage);
    expect([everyone.mentionsBot, here.mentionsBot]).toEqual([false, false]);
  });

  it('flags a reply to one of the bot\'s messages, without counting the reply ping as a mention', async () => {
    const chat = { channel: 'discord', chatId: h.discord.general.id };
    const sent = await h.channel.send(chat, 'I am the bot');
    h.discord.userMessage({ channelId: h.discord.general.id, author: bob, content: 'replying', replyTo: sent.ids[0], mentions: [h.discord.bot] });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event).toMatchObject({ text: 'replying', replyToBot: true, mentionsBot: false });
  });

  it('does not flag a reply to somebody else', async () => {
    const first = h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: 'first' });
    await h.events.next(isMessage);
    h.discord.userMessage({ channelId: h.discord.general.id, author: bob, content: 'answer', replyTo: first.id, mentions: [alice] });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event.replyToBot).toBe(false);
  });

  it('treats a Discord thread as a conversation of its own', async () => {
    const thread = h.discord.createThread(h.discord.general.id, 'side-topic');
    h.discord.userMessage({ channelId: thread.id, author: alice, content: 'in the thread' });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event.chat).toMatchObject({ chatId: thread.id, kind: 'group', title: '#side-topic (Pincer Test Guild)' });
    expect(event.chat.chatId).not.toBe(h.discord.general.id);
  });

  it("writes other users' mentions as their names", async () => {
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: `thanks <@${bob.id}>!`, mentions: [bob] });
    const event = await h.events.next<InboundMessage>(isMessage);
    expect(event.text).toBe('thanks @Bob!');
  });

  it('passes a slash command typed as text through as a plain message', async () => {
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: '/status' });
    const event = await h.events.next(isMessage);
    expect(event).toMatchObject({ type: 'message', text: '/status' });
  });

  it("ignores the bot's own messages and other bots", async () => {
    const other = h.discord.addMember('OtherBot', { bot: true });
    await h.channel.send({ channel: 'discord', chatId: h.discord.general.id }, 'my own words');
    h.discord.userMessage({ channelId: h.discord.general.id, author: other, content: 'beep' });
    h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: 'after' });
    const event = await h.events.next<InboundMessage>();
    expect(event.text).toBe('after');
  });
});

describe('discord allowlists', () => {
  const users: Record<string, FakeUser> = {};
  const prepare = (discord: Harness['discord']) => {
    users.alice = discord.addMember('Alice');
    users.bob = discord.addMember('Bob');
  };
  const texts = async (h: Harness, count: number) => {
    const seen: string[] = [];
    for (let i = 0; i < count; i++) seen.push((await h.events.next<InboundMessage>()).text);
    return seen;
  };

  it('admits only the listed users, in DMs and in guilds', async () => {
    const h = await startHarness({ prepare, config: () => ({ allowedUsers: [users.alice!.id] }) });
    try {
      const { alice, bob } = users as { alice: FakeUser; bob: FakeUser };
      h.discord.userMessage({ channelId: h.discord.dmChannel(bob).id, author: bob, content: 'bob dm' });
      h.discord.userMessage({ channelId: h.discord.general.id, author: bob, content: 'bob guild' });
      h.discord.userMessage({ channelId: h.discord.dmChannel(alice).id, author: alice, content: 'alice dm' });
      h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: 'alice guild' });
      expect(await texts(h, 2)).toEqual(['alice dm', 'alice guild']);
      expect(h.events.pending).toHaveLength(0);
    } finally {
      await h.close();
    }
  });

  it('admits only the listed channels and their threads; DMs are checked against users only', async () => {
    let other!: { id: string };
    const h = await startHarness({
      prepare: (discord) => {
        prepare(discord);
        other = discord.createTextChannel('other');
      },
      config: (discord) => ({ allowedChannels: [discord.general.id] }),
    });
    try {
      const alice = users.alice!;
      const thread = h.discord.createThread(h.discord.general.id, 'allowed-thread');
      h.discord.userMessage({ channelId: other.id, author: alice, content: 'elsewhere' });
      h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: 'in general' });
      h.discord.userMessage({ channelId: thread.id, author: alice, content: 'in a thread of general' });
      h.discord.userMessage({ channelId: h.discord.dmChannel(alice).id, author: alice, content: 'in a dm' });
      expect(await texts(h, 3)).toEqual(['in general', 'in a thread of general', 'in a dm']);
      expect(h.events.pending).toHaveLength(0);
    } finally {
      await h.close();
    }
  });

  it('ignores guilds outside the guild list but still takes DMs', async () => {
    const h = await startHarness({ prepare, config: { allowedGuilds: ['1'] } });
    try {
      const alice = users.alice!;
      h.discord.userMessage({ channelId: h.discord.general.id, author: alice, content: 'guild' });
      h.discord.userMessage({ channelId: h.discord.dmChannel(alice).id, author: alice, content: 'dm' });
      expect(await texts(h, 1)).toEqual(['dm']);
      expect(h.events.pending).toHaveLength(0);
    } finally {
      await h.close();
    }
  });

  it("takes other bots' messages when respondToBots is set", async () => {
    let other!: FakeUser;
    const h = await startHarness({ prepare: (discord) => void (other = discord.addMember('HelperBot', { bot: true })), config: { respondToBots: true } });
    try {
      h.discord.userMessage({ channelId: h.discord.general.id, author: other, content: 'beep' });
      const event = await h.events.next<InboundMessage>();
      expect(event).toMatchObject({ text: 'beep', sender: { id: other.id, isBot: true } });
    } finally {
      await h.close();
    }
  });
});
