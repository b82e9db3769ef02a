import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOT_AVAILABLE } from '../../../src/channels/access.js';
import { encodeApprovalPayload } from '../../../src/channels/approval-payload.js';
import type { InboundCommand, InboundMessage } from '../../../src/channels/types.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, BOB, OTHER_BOT, dmOf, sleep, startChannel, supergroup, type Harness } from './helpers.js';

describe('Telegram inbound messages', () => {
  let fake: FakeTelegram;
  let harness: Harness;

  beforeEach(async () => {
    // Privacy mode off: the bot is sent every group message, so the adapter's reading of each kind can be checked.
    fake = await startFakeTelegram({ privacy: false });
    harness = await startChannel(fake);
  });

  afterEach(async () => {
    await harness.channel.stop();
    await fake.close();
  });

  it('turns a DM into a message with the DM thread key, kind and sender', async () => {
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'hello there' });
    const event = await harness.events.next<InboundMessage>();
    expect(event).toMatchObject({
      type: 'message',
      text: 'hello there',
      chat: { channel: 'telegram', chatId: '1001', kind: 'dm', scope: 'global' },
      sender: { id: '1001', name: 'Alice Liddell' },
      mentionsBot: true,
      replyToBot: false,
    });
    expect(event.chat.subId).toBeUndefined();
  });

  it('describes the files of a message by kind, with their file_id and never a URL (it would hold the token)', async () => {
    const file = (id: string, size: number) => ({ file_id: id, file_unique_id: `u${id}`, file_size: size });
    fake.injectUpdate({
      message: {
        message_id: 90,
        date: 0,
        chat: dmOf(ALICE),
        from: ALICE,
        caption: 'see these',
        photo: [{ ...file('small', 10), width: 90, height: 90 }, { ...file('large', 900), width: 900, height: 900 }],
        voice: { ...file('voice1', 300), duration: 2, mime_type: 'audio/ogg' },
        document: { ...file('doc1', 40), file_name: 'data.csv', mime_type: 'text/csv' },
      },
    } as never);
    const event = await harness.events.next<InboundMessage>();
    expect(event.text).toBe('see these');
    expect(event.attachments).toEqual([
      { kind: 'image', name: 'photo.jpg', fileId: 'large', mimeType: 'image/jpeg', sizeBytes: 900 },
      { kind: 'document', name: 'data.csv', fileId: 'doc1', mimeType: 'text/csv', sizeBytes: 40 },
      { kind: 'audio', name: 'voice.ogg', fileId: 'voice1', mimeType: 'audio/ogg', sizeBytes: 300 },
    ]);
  });

  it('emits an unaddressed group message with mentionsBot false and the group scope and title', async () => {
    const group = supergroup();
    fake.sendUserMessage({ chat: group, from: BOB, text: 'just chatting' });
    const event = await harness.events.next<InboundMessage>();
    expect(event).toMatchObject({
      type: 'message',
      text: 'just chatting',
      mentionsBot: false,
      replyToBot: false,
      chat: { chatId: String(group.id), kind: 'group', scope: `telegram:chat:${group.id}`, title: 'Team Room' },
    });
  });

  it('flags an @mention of the bot and strips the username from the text', async () => {
    fake.sendUserMessage({ chat: supergroup(), from: BOB, text: '@pincer_test_bot what time is it?' });
    const event = await harness.events.next<InboundMessage>();
    expect(event.mentionsBot).toBe(true);
    expect(event.text).toBe('what time is it?');
  });

  it('finds an @mention in the text when the update carries no entities', async () => {
    const group = supergroup();
    fake.injectUpdate({
      message: { message_id: 77, date: Math.floor(Date.now() / 1000), chat: group, from: BOB, text: 'hey @Pincer_Test_Bot, ping' } as never,
    });
    fake.injectUpdate({
      message: { message_id: 78, date: Math.floor(Date.now() / 1000), chat: group, from: BOB, text: 'mail @pincer_test_bot_fan' } as never,
    });
    const addressed = await harness.events.next<InboundMessage>((e) => e.type === 'message' && e.messageId === '77');
    expect(addressed.mentionsBot).toBe(true);
    expect(addressed.text).toBe('hey , ping');
    const other = await harness.events.next<InboundMessage>((e) => e.type === 'message' && e.messageId === '78');
    expect(other.mentionsBot).toBe(false);
  });

  it('does not count a mention of someone else', async () => {
    fake.sendUserMessage({ chat: supergroup(), from: BOB, text: 'ask @someone_else please' });
    const event = await harness.events.next<InboundMessage>();
    expect(event.mentionsBot).toBe(false);
    expect(event.text).toBe('ask @someone_else please');
  });

  it('flags a reply to one of the bot messages', async () => {
    const group = supergroup();
    const sent = await harness.channel.send({ channel: 'telegram', chatId: String(group.id) }, 'I am here');
    fake.sendUserMessage({ chat: group, from: BOB, text: 'thanks', replyTo: Number(sent.ids[0]) });
    const event = await harness.events.next<InboundMessage>();
    expect(event).toMatchObject({ replyToBot: true, mentionsBot: true, text: 'thanks' });
  });

  it('does not count a reply to another user as a reply to the bot', async () => {
    const group = supergroup();
    const { message } = fake.sendUserMessage({ chat: group, from: ALICE, text: 'first' });
    fake.sendUserMessage({ chat: group, from: BOB, text: 'second', replyTo: message.message_id });
    const event = await harness.events.next<InboundMessage>((e) => e.type === 'message' && e.text === 'second');
    expect(event.replyToBot).toBe(false);
  });

  it('reads /cmd@thisbot in a group as a command with lower-case name and args', async () => {
    fake.sendUserMessage({ chat: supergroup(), from: ALICE, text: '/Policy@pincer_test_bot allow web_fetch' });
    const event = await harness.events.next<InboundCommand>();
    expect(event).toMatchObject({ type: 'command', name: 'policy', args: 'allow web_fetch', sender: { id: '1001' } });
  });

  it('ignores /cmd@otherbot entirely', async () => {
    const group = supergroup();
    fake.sendUserMessage({ chat: group, from: ALICE, text: '/stop@other_bot' });
    fake.sendUserMessage({ chat: group, from: ALICE, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    expect(harness.events.seen).toHaveLength(1);
  });

  it('reads a bare /cmd in a DM as a command, and a known bare command in a group', async () => {
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: '/start' });
    fake.sendUserMessage({ chat: supergroup(), from: BOB, text: '/stop now' });
    const start = await harness.events.next<InboundCommand>((e) => e.type === 'command' && e.name === 'start');
    const stop = await harness.events.next<InboundCommand>((e) => e.type === 'command' && e.name === 'stop');
    expect(start.chat.kind).toBe('dm');
    expect(stop).toMatchObject({ args: 'now', chat: { kind: 'group' } });
  });

  it('keeps an unknown bare /cmd in a group as ordinary text (it may be meant for another bot)', async () => {
    fake.sendUserMessage({ chat: supergroup(), from: BOB, text: '/roll 2d6' });
    const event = await harness.events.next();
    expect(event).toMatchObject({ type: 'message', text: '/roll 2d6', mentionsBot: false });
  });

  it('treats forum topics as separate threads and replies inside the topic', async () => {
    const forum = { ...supergroup(-1009999, 'Forum'), is_forum: true } as Chat;
    fake.sendUserMessage({ chat: forum, from: ALICE, text: 'in topic 5', threadId: 5 });
    fake.sendUserMessage({ chat: forum, from: ALICE, text: 'in topic 9', threadId: 9 });
    const five = await harness.events.next<InboundMessage>((e) => e.type === 'message' && e.text === 'in topic 5');
    const nine = await harness.events.next<InboundMessage>((e) => e.type === 'message' && e.text === 'in topic 9');
    expect(five.chat.subId).toBe('5');
    expect(nine.chat.subId).toBe('9');
    // Every topic message "replies" to the topic's first message: that is not a reply to the bot.
    expect(five.replyToBot).toBe(false);

    await harness.channel.send(five.chat, 'answer in five');
    await harness.channel.typing(nine.chat);
    const reply = fake.sent.find((record) => record.plainText === 'answer in five');
    expect(reply?.threadId).toBe(5);
    expect(fake.chatActions.at(-1)).toMatchObject({ chatId: '-1009999', action: 'typing', threadId: 9 });
  });

  it('ignores messages of other bots', async () => {
    const group = supergroup();
    fake.sendUserMessage({ chat: group, from: OTHER_BOT, text: '@pincer_test_bot hi from a bot' });
    fake.sendUserMessage({ chat: group, from: BOB, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    expect(harness.events.seen).toHaveLength(1);
  });

  it('handles a later update while earlier ones are still unread by the agent (handlers only queue)', async () => {
    for (let i = 0; i < 20; i++) fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: `m${i}` });
    await waitFor(() => harness.events.seen.length === 20, 5000, '20 events');
    expect(harness.events.seen.map((e) => (e.type === 'message' ? e.text : ''))).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
  });

  it('stop() ends the event stream promptly, even with a long poll held open', async () => {
    await sleep(100);
    const started = Date.now();
    await harness.channel.stop();
    await waitFor(() => harness.events.done, 1000, 'stream end');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('Telegram allowlists', () => {
  const CAROL: User = { id: 1003, is_bot: false, first_name: 'Carol' };
  let fake: FakeTelegram;
  let harness: Harness;

  beforeEach(async () => {
    // Privacy mode off, so a refused group message really reaches the bot.
    fake = await startFakeTelegram({ privacy: false });
  });

  afterEach(async () => {
    await harness.channel.stop();
    await fake.close();
  });

  it('ignores users outside allowedUsers and answers their DM with deniedReply once', async () => {
    harness = await startChannel(fake, { config: { allowedUsers: [String(ALICE.id)], deniedReply: 'This bot is private.' } });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: 'let me in' });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: 'please' });
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    await waitFor(() => fake.chatMessages(BOB.id).length > 0, 2000, 'denied reply');
    // Updates are routed one after another, so the events before the marker are all seen. A denied
    // reply goes out in the background, though, not in update order: the strongest wait is a post of
    // the bot's own to the same chat, started after the marker was routed; a second reply, decided
    // while 'please' was routed, would have been posted before it.
    await harness.channel.send({ channel: 'telegram', chatId: String(BOB.id) }, 'marker out');
    expect(harness.events.seen.map((e) => e.sender.id)).toEqual([String(ALICE.id)]);
    expect(fake.chatMessages(BOB.id).map((m) => m.plainText)).toEqual(['This bot is private.', 'marker out']);
  });

  it('serves anyone in an allowed chat and in no other group; DMs are left to allowedUsers', async () => {
    const allowed = supergroup(-100111, 'Allowed');
    const other = supergroup(-100222, 'Other');
    harness = await startChannel(fake, { config: { allowedChats: [String(allowed.id)] } });
    fake.sendUserMessage({ chat: other, from: BOB, text: 'elsewhere' });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: 'dm' });
    fake.sendUserMessage({ chat: allowed, from: BOB, text: 'allowed' });
    // Updates are routed one after another: what the marker follows was seen or dropped before it.
    await harness.events.next((e) => e.type === 'message' && e.text === 'allowed');
    expect(harness.events.seen.map((e) => (e.type === 'message' ? e.text : e.type))).toEqual(['dm', 'allowed']);
  });

  it('with both lists, takes a listed user in DMs and in listed chats only (both lists must admit)', async () => {
    const allowed = supergroup(-100111, 'Allowed');
    const other = supergroup(-100222, 'Other');
    harness = await startChannel(fake, { config: { allowedUsers: [String(ALICE.id)], allowedChats: [String(allowed.id)] } });
    fake.sendUserMessage({ chat: other, from: ALICE, text: 'alice elsewhere' });
    fake.sendUserMessage({ chat: allowed, from: BOB, text: 'bob in the allowed chat' });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: 'bob dm' });
    fake.sendUserMessage({ chat: allowed, from: ALICE, text: 'alice in the allowed chat' });
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'alice dm' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'alice dm');
    expect(harness.events.seen.map((e) => (e.type === 'message' ? e.text : e.type))).toEqual(['alice in the allowed chat', 'alice dm']);
  });

  it('takes the owners as listed users', async () => {
    harness = await startChannel(fake, {
      config: { allowedUsers: [String(ALICE.id)] },
      options: { owners: [`telegram:${BOB.id}`, `discord:${CAROL.id}`] },
    });
    fake.sendUserMessage({ chat: dmOf(CAROL), from: CAROL, text: 'an owner elsewhere' });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: 'the owner' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'the owner');
    expect(harness.events.seen).toHaveLength(1);
  });

  it('answers a refused command in a DM with the shared refusal, or deniedReply when set, once per interval', async () => {
    harness = await startChannel(fake, { config: { allowedUsers: [String(ALICE.id)] } });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: '/status' });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: '/start' });
    await waitFor(() => fake.chatMessages(BOB.id).length > 0, 2000, 'refusal');
    // The refusal goes out in the background: a post of the bot's own to the chat, after both, is the marker.
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    await harness.channel.send({ channel: 'telegram', chatId: String(BOB.id) }, 'marker out');
    expect(fake.chatMessages(BOB.id).map((m) => m.plainText)).toEqual([NOT_AVAILABLE, 'marker out']);
    await harness.channel.stop();

    harness = await startChannel(fake, { config: { allowedUsers: [String(ALICE.id)], deniedReply: 'Ask Alice for access.' } });
    fake.sendUserMessage({ chat: dmOf(CAROL), from: CAROL, text: '/status' });
    await waitFor(() => fake.chatMessages(CAROL.id).length > 0, 2000, 'denied reply');
    expect(fake.chatMessages(CAROL.id).map((m) => m.plainText)).toEqual(['Ask Alice for access.']);
    expect(harness.events.seen).toEqual([]);
  });

  it('ignores a refused command in a group', async () => {
    const group = supergroup(-100111, 'Open');
    harness = await startChannel(fake, { config: { allowedUsers: [String(ALICE.id)] } });
    fake.sendUserMessage({ chat: group, from: BOB, text: '/status@pincer_test_bot' });
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    // A refusal would go out in the background: a post of the bot's own to the group is the marker.
    await harness.channel.send({ channel: 'telegram', chatId: String(group.id) }, 'marker out');
    expect(harness.events.seen).toHaveLength(1);
    expect(fake.chatMessages(group.id).map((m) => m.plainText)).toEqual(['marker out']);
  });

  it('answers a refused button press with the shared refusal as a toast', async () => {
    harness = await startChannel(fake, { config: { allowedUsers: [String(ALICE.id)] } });
    const sent = await harness.channel.send({ channel: 'telegram', chatId: String(ALICE.id) }, 'a prompt');
    fake.pressButton({ chat: dmOf(ALICE), from: BOB, messageId: Number(sent.ids[0]), data: encodeApprovalPayload('a1', 'approve') });
    await waitFor(() => fake.callbackAnswers.length > 0, 2000, 'callback answer');
    expect(fake.callbackAnswers[0]).toMatchObject({ userId: String(BOB.id), text: NOT_AVAILABLE });
    expect(harness.events.seen).toEqual([]);
  });
});

describe('Telegram privacy mode (on by default)', () => {
  let fake: FakeTelegram;
  let harness: Harness;

  beforeEach(async () => {
    fake = await startFakeTelegram();
    harness = await startChannel(fake);
  });

  afterEach(async () => {
    await harness.channel.stop();
    await fake.close();
  });

  const texts = () => harness.events.seen.map((e) => (e.type === 'message' ? e.text : e.type === 'command' ? `/${e.name}` : e.type));

  it('in a group, the bot gets only commands, @mentions of it and replies to it', async () => {
    const group = supergroup();
    const sent = await harness.channel.send({ channel: 'telegram', chatId: String(group.id) }, 'I am here');
    fake.sendUserMessage({ chat: group, from: BOB, text: 'just chatting' });
    fake.sendUserMessage({ chat: group, from: BOB, text: 'ask @someone_else please' });
    fake.sendUserMessage({ chat: group, from: BOB, text: '/roll@other_bot 2d6' });
    const { message: first } = fake.sendUserMessage({ chat: group, from: ALICE, text: 'a human message' });
    fake.sendUserMessage({ chat: group, from: BOB, text: 'replying to Alice', replyTo: first.message_id });
    fake.sendUserMessage({ chat: group, from: BOB, text: '@pincer_test_bot what time is it?' });
    fake.sendUserMessage({ chat: group, from: BOB, text: '/status@pincer_test_bot' });
    fake.sendUserMessage({ chat: group, from: BOB, text: '/stop' });
    fake.sendUserMessage({ chat: group, from: BOB, text: 'thanks', replyTo: Number(sent.ids[0]) });
    fake.sendUserMessage({ chat: dmOf(BOB), from: BOB, text: 'marker' });
    await harness.events.next((e) => e.type === 'message' && e.text === 'marker');
    expect(texts()).toEqual(['what time is it?', '/status', '/stop', 'thanks', 'marker']);
  });

  it('as an administrator of the group, the bot gets every message', async () => {
    const group = supergroup();
    fake.setMemberStatus(group.id, fake.bot.id, 'administrator');
    fake.sendUserMessage({ chat: group, from: BOB, text: 'just chatting' });
    const event = await harness.events.next<InboundMessage>();
    expect(event).toMatchObject({ text: 'just chatting', mentionsBot: false, chat: { kind: 'group' } });
  });

  it('switched off, the bot gets every group message and getMe says it can read them all', async () => {
    fake.setPrivacy(false);
    fake.sendUserMessage({ chat: supergroup(), from: BOB, text: 'just chatting' });
    const event = await harness.events.next<InboundMessage>();
    expect(event).toMatchObject({ text: 'just chatting', mentionsBot: false });
    const me = (await (await fetch(`${fake.apiRoot}/bot${fake.token}/getMe`)).json()) as { result: { can_read_all_group_messages: boolean } };
    expect(me.result.can_read_all_group_messages).toBe(true);
  });
});
