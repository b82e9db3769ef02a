import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandText } from '../../../src/channels/slack/slash-command.js';
import type { ChatInfo, InboundCommand } from '../../../src/channels/types.js';
import { ALICE, BOB, DM_ALICE, GENERAL, PRIVATE, startHarness, type Harness } from './harness.js';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness.close();
});

async function run(channel: string, user: string, text: string): Promise<{ command: InboundCommand; envelopeId: string }> {
  const before = harness.recorder.events.length;
  const envelopeId = await harness.fake.runSlashCommand({ channel, user, text });
  const command = (await harness.recorder.waitFor(before + 1))[before] as InboundCommand;
  return { command, envelopeId };
}

describe('parseCommandText', () => {
  it('takes the first word as the lower-case name and the rest as arguments', () => {
    expect(parseCommandText('  Policy   allow http_fetch  global ')).toEqual({ name: 'policy', args: 'allow http_fetch  global' });
    expect(parseCommandText('/stop')).toEqual({ name: 'stop', args: '' });
    expect(parseCommandText('   ')).toEqual({ name: 'help', args: '' });
  });
});

describe('SlackChannel slash command', () => {
  it('acknowledges /pincer at once and yields the command with its arguments and scope', async () => {
    const { command, envelopeId } = await run(GENERAL, ALICE.id, 'policy allow http_fetch');
    expect(harness.fake.acked(envelopeId)).toBe(true);
    expect(command).toMatchObject({
      type: 'command',
      name: 'policy',
      args: 'allow http_fetch',
      sender: { id: ALICE.id, name: ALICE.name },
      chat: { channel: 'slack', chatId: GENERAL, kind: 'group', scope: `slack:team:${harness.fake.teamId}` },
    });
  });

  it('makes a bare /pincer a help command', async () => {
    const { command } = await run(DM_ALICE, ALICE.id, '');
    expect(command).toMatchObject({ name: 'help', args: '', chat: { chatId: DM_ALICE, kind: 'dm', scope: 'global' } });
  });

  it('answers privately with an ephemeral response and publicly in the channel', async () => {
    const { fake } = harness;
    const { command } = await run(PRIVATE, BOB.id, 'usage');
    await command.respond!({ text: 'Your usage: **12** tokens', private: true });
    expect(fake.responses(BOB.id).at(-1)).toMatchObject({ response_type: 'ephemeral', text: 'Your usage: *12* tokens', channel: PRIVATE });
    expect(fake.botMessages(PRIVATE)).toHaveLength(0);

    await command.respond!({ text: 'Stopped.' });
    expect(fake.responses(BOB.id).at(-1)).toMatchObject({ response_type: 'in_channel', text: 'Stopped.' });
    expect(fake.botMessages(PRIVATE).map((message) => message.text)).toEqual(['Stopped.']);
  });

  it('applies a command in a channel to the thread the bot was last addressed in', async () => {
    const root = await harness.fake.sendMessage({ channel: GENERAL, user: BOB.id, text: 'long task please', mention: true });
    const { command } = await run(GENERAL, BOB.id, 'stop');
    expect(command.chat).toMatchObject({ chatId: GENERAL, subId: root.ts });
  });
});

describe('SlackChannel allowlists on interactions', () => {
  it('tells a user outside the allowlists, privately, and yields nothing', async () => {
    const limited = await startHarness({ allowedUsers: [ALICE.id] });
    try {
      await limited.fake.runSlashCommand({ channel: GENERAL, user: BOB.id, text: 'status' });
      const sent = await limited.channel.sendApproval({ channel: 'slack', chatId: GENERAL, subId: '1.0' }, {
        id: 'ap9', title: 'Approval needed', tool: 'x', summary: 'x', args: '{}', actions: ['approve', 'deny'], requestedBy: ALICE, expiresAt: Date.now() + 60_000,
      });
      await limited.fake.pressButton({ channel: GENERAL, user: BOB.id, messageTs: sent.ids[0]!, actionId: 'pa:ap9:y' });
      await limited.fake.waitFor(() => limited.fake.ephemerals(BOB.id).length === 1, 2_000, 'the refusal of the press');
      expect(limited.fake.responses(BOB.id).map((response) => [response.response_type, response.text])).toEqual([
        ['ephemeral', 'pincer is not available to you here.'],
      ]);
      expect(limited.fake.ephemerals(BOB.id)[0]!.text).toBe('pincer is not available to you here.');
      // Both were refused, and a refusal is the last thing their handling does: no event came of them.
      expect(limited.recorder.events).toEqual([]);
    } finally {
      await limited.close();
    }
  });
});

describe('SlackChannel isAdmin', () => {
  const group: ChatInfo = { channel: 'slack', chatId: GENERAL, kind: 'group', scope: 'slack:team:T0FAKE' };

  it('treats workspace admins and owners as admins, in channels only, and caches the answer', async () => {
    const { channel, fake } = harness;
    expect(await channel.isAdmin(group, ALICE.id)).toBe(true);
    expect(await channel.isAdmin(group, BOB.id)).toBe(false);
    expect(await channel.isAdmin({ ...group, chatId: DM_ALICE, kind: 'dm', scope: 'global' }, ALICE.id)).toBe(false);
    expect(await channel.isAdmin(group, 'U0NOBODY')).toBe(false);
    const lookups = fake.callsOf('users.info').length;
    expect(await channel.isAdmin(group, ALICE.id)).toBe(true);
    expect(fake.callsOf('users.info').length).toBe(lookups);
  });
});
