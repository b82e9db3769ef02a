import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import { ALICE, BOB, DM_ALICE, GENERAL, PRIVATE, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(overrides: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  harness = await startHarness(overrides);
  return harness;
}

describe('SlackChannel inbound messages', () => {
  it('connects over Socket Mode and turns a DM into a DM message for the agent', async () => {
    const { fake, recorder } = await start();
    expect(fake.socketConnections.open).toBe(1);
    const { ts } = await fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'hello &amp; &lt;there&gt;' });
    const [event] = (await recorder.waitFor(1)) as InboundMessage[];
    expect(event).toMatchObject({
      type: 'message',
      messageId: ts,
      text: 'hello & <there>',
      mentionsBot: true,
      replyToBot: false,
      sender: { id: ALICE.id, name: ALICE.name },
      chat: { channel: 'slack', chatId: DM_ALICE, kind: 'dm', scope: 'global' },
    });
    expect(event!.chat.subId).toBeUndefined();
  });

  it('gives a DM written inside a thread that thread as its sub-conversation', async () => {
    const { fake, recorder } = await start();
    const root = await fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'root' });
    await fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'in thread', threadTs: root.ts });
    const [, inThread] = (await recorder.waitFor(2)) as InboundMessage[];
    expect(inThread!.chat).toMatchObject({ chatId: DM_ALICE, subId: root.ts, kind: 'dm' });
  });

  it('yields one addressed message for an app_mention and its message event, whatever their order', async () => {
    const { fake, recorder } = await start();
    const first = await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'what time is it?', mention: true, order: 'mention-first' });
    const second = await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'and now?', mention: true, order: 'message-first' });
    const events = (await recorder.acknowledged()) as InboundMessage[];
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      text: 'what time is it?',
      mentionsBot: true,
      messageId: first.ts,
      chat: { chatId: GENERAL, subId: first.ts, kind: 'group', scope: `slack:team:${fake.teamId}`, title: '#general' },
    });
    expect(events[1]).toMatchObject({ text: 'and now?', mentionsBot: true, chat: { subId: second.ts } });
  });

  it('passes unaddressed channel messages on as context, without a mention flag', async () => {
    const { fake, recorder } = await start();
    await fake.sendMessage({ channel: PRIVATE, user: BOB.id, text: 'just chatting' });
    const [event] = (await recorder.waitFor(1)) as InboundMessage[];
    expect(event).toMatchObject({ text: 'just chatting', mentionsBot: false, chat: { chatId: PRIVATE, kind: 'group', title: '#secret-plans' } });
    expect(event!.chat.subId).toBeUndefined();
  });

  it('follows a thread the bot was addressed in: later replies there are addressed without a mention', async () => {
    const { fake, recorder, state } = await start();
    const root = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'help me', mention: true });
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'me too', threadTs: root.ts });
    const other = await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'unrelated' });
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'side thread', threadTs: other.ts });
    const events = (await recorder.waitFor(4)) as InboundMessage[];
    expect(events[1]).toMatchObject({ text: 'me too', mentionsBot: true, replyToBot: true, chat: { subId: root.ts } });
    expect(events[2]).toMatchObject({ text: 'unrelated', mentionsBot: false });
    expect(events[3]).toMatchObject({ text: 'side thread', mentionsBot: false, chat: { subId: other.ts } });
    expect([...state.values.keys()]).toContain(`slack:followed:${GENERAL}:${root.ts}`);
  });

  it('hands the recent top-level talk of a channel to the thread a mention starts, as context', async () => {
    const { fake, recorder } = await start({ threadContextMessages: 2 });
    for (const text of ['one', 'two', 'three']) await fake.sendMessage({ channel: GENERAL, user: BOB.id, text });
    const mention = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'summarise please', mention: true });
    const events = (await recorder.acknowledged()) as InboundMessage[];
    expect(events.map((event) => [event.text, event.mentionsBot, event.chat.subId])).toEqual([
      ['one', false, undefined],
      ['two', false, undefined],
      ['three', false, undefined],
      ['two', false, mention.ts],
      ['three', false, mention.ts],
      ['summarise please', true, mention.ts],
    ]);
  });

  it('hands no context over when threadContextMessages is 0', async () => {
    const { fake, recorder } = await start({ threadContextMessages: 0 });
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'before' });
    await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'hi', mention: true });
    const events = (await recorder.acknowledged()) as InboundMessage[];
    expect(events.map((event) => event.text)).toEqual(['before', 'hi']);
  });

  it('does not follow threads when followThreads is off', async () => {
    const { fake, recorder } = await start({ followThreads: false });
    const root = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'help me', mention: true });
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'me too', threadTs: root.ts });
    const events = (await recorder.waitFor(2)) as InboundMessage[];
    expect(events[1]).toMatchObject({ mentionsBot: false, chat: { subId: root.ts } });
  });

  it('addresses a mention inside an existing thread to that thread', async () => {
    const { fake, recorder } = await start();
    const root = await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'topic' });
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'what do you think?', threadTs: root.ts, mention: true });
    const events = (await recorder.waitFor(2)) as InboundMessage[];
    expect(events[1]).toMatchObject({ mentionsBot: true, chat: { chatId: GENERAL, subId: root.ts } });
  });

  it('ignores its own messages, other bots, and edits, deletions and joins', async () => {
    const { fake, channel, recorder } = await start();
    await channel.send({ channel: 'slack', chatId: GENERAL }, 'I said this');
    const envelopes = [
      await fake.sendEvent({ type: 'message', subtype: 'bot_message', bot_id: 'B9OTHER', username: 'ci', text: 'build ok', ts: '1.1', channel: GENERAL, channel_type: 'channel' }),
      await fake.sendEvent({ type: 'message', user: 'U3OTHERBOT', bot_id: 'B8OTHER', text: 'beep', ts: '1.2', channel: GENERAL, channel_type: 'channel' }),
      await fake.sendEvent({ type: 'message', subtype: 'message_changed', channel: GENERAL, channel_type: 'channel', ts: '1.3', message: { user: BOB.id, text: 'edited' } }),
      await fake.sendEvent({ type: 'message', subtype: 'message_deleted', channel: GENERAL, channel_type: 'channel', ts: '1.4' }),
      await fake.sendEvent({ type: 'message', subtype: 'channel_join', user: BOB.id, text: 'joined', channel: GENERAL, channel_type: 'channel', ts: '1.5' }),
    ];
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'a person' });
    await Promise.all(envelopes.map((id) => fake.waitForAck(id)));
    const events = (await recorder.acknowledged()) as InboundMessage[];
    expect(events.map((event) => event.text)).toEqual(['a person']);
  });

  it('passes other bots on when respondToBots is set, marked as bots', async () => {
    const { fake, channel, recorder } = await start({ respondToBots: true });
    await channel.send({ channel: 'slack', chatId: GENERAL }, 'I said this');
    await fake.waitForAck(await fake.sendEvent({ type: 'message', subtype: 'bot_message', bot_id: 'B9OTHER', username: 'ci', text: 'build ok', ts: '1.1', channel: GENERAL, channel_type: 'channel' }));
    const events = (await recorder.acknowledged()) as InboundMessage[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ text: 'build ok', sender: { id: 'B9OTHER', name: 'ci', isBot: true } });
  });

  it('shows other mentions and links readably, and passes file metadata', async () => {
    const { fake, recorder } = await start();
    await fake.sendMessage({
      channel: DM_ALICE,
      user: ALICE.id,
      text: 'ask <@U2BOB> in <#C1GENERAL|general> about <https://example.com|the site> &amp; <https://x.org>',
      extra: { subtype: 'file_share', files: [{ id: 'F01NOTES', name: 'notes.txt', mimetype: 'text/plain', size: 12, url_private: 'https://files/notes.txt' }] },
    });
    const [event] = (await recorder.waitFor(1)) as InboundMessage[];
    expect(event!.text).toBe('ask @Bob in #general about the site (https://example.com) & https://x.org');
    expect(event!.attachments).toEqual([{ kind: 'document', name: 'notes.txt', mimeType: 'text/plain', sizeBytes: 12, fileId: 'F01NOTES', url: 'https://files/notes.txt' }]);
  });

  it('applies the allowlists of users, channels and teams', async () => {
    const { fake, recorder } = await start({ allowedUsers: [ALICE.id], allowedChannels: [GENERAL] });
    await fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'bob in general' });
    await fake.sendMessage({ channel: PRIVATE, user: ALICE.id, text: 'alice in private' });
    await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'alice in general' });
    await fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'alice in her DM' });
    const events = (await recorder.acknowledged()) as InboundMessage[];
    expect(events.map((event) => event.text)).toEqual(['alice in general', 'alice in her DM']);
    await harness!.close();

    harness = await startHarness({ allowedTeams: ['T0OTHER'] });
    await harness.fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'wrong workspace' });
    expect(await harness.recorder.acknowledged()).toEqual([]);
  });

  it('ends the event stream on stop', async () => {
    const { fake, channel, recorder } = await start();
    await channel.stop();
    await recorder.ended();
    await fake.waitFor(() => fake.socketConnections.open === 0, 3_000, 'socket close');
  });
});
