import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TelegramConfigSchema } from '../../../src/config/schema.js';
import { ChannelError, ConfigError } from '../../../src/errors.js';
import { TelegramChannel } from '../../../src/channels/telegram/adapter.js';
import { toBotCommands } from '../../../src/channels/telegram/commands.js';
import type { ChatInfo } from '../../../src/channels/types.js';
import { startFakeTelegram, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, BOB, COMMANDS, FAST_OPTIONS, startChannel, testConfig, testDeps, type Harness } from './helpers.js';

const GROUP: ChatInfo = { channel: 'telegram', chatId: '-100777', kind: 'group', scope: 'telegram:chat:-100777' };

describe('Telegram commands and admins', () => {
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

  it('registers every command, admin-only ones included, for private chats and for groups', () => {
    const scopes = fake.commands.map((call) => call.scope?.type);
    expect(scopes).toEqual(['all_private_chats', 'all_group_chats']);
    for (const call of fake.commands) {
      expect(call.commands.map((c) => c.command)).toEqual(['stop', 'new', 'status', 'policy']);
    }
    expect(fake.commands[0]!.commands[3]!.description).toBe('Admin tool policy (list | allow TOOL)');
  });

  it('reports group creators and administrators as admins, members not, DMs never', async () => {
    fake.setMemberStatus(GROUP.chatId, ALICE.id, 'creator');
    fake.setMemberStatus(GROUP.chatId, BOB.id, 'administrator');
    expect(await harness.channel.isAdmin(GROUP, String(ALICE.id))).toBe(true);
    expect(await harness.channel.isAdmin(GROUP, String(BOB.id))).toBe(true);
    expect(await harness.channel.isAdmin(GROUP, '1003')).toBe(false);
    const dm: ChatInfo = { channel: 'telegram', chatId: String(ALICE.id), kind: 'dm', scope: 'global' };
    expect(await harness.channel.isAdmin(dm, String(ALICE.id))).toBe(false);
  });

  it('caches the admin answer for a while', async () => {
    fake.setMemberStatus(GROUP.chatId, BOB.id, 'administrator');
    expect(await harness.channel.isAdmin(GROUP, String(BOB.id))).toBe(true);
    fake.setMemberStatus(GROUP.chatId, BOB.id, 'member');
    expect(await harness.channel.isAdmin(GROUP, String(BOB.id))).toBe(true);
    expect(fake.calls.filter((c) => c.method === 'getChatMember')).toHaveLength(1);
  });
});

describe('toBotCommands', () => {
  it('lower-cases names and leaves out names Telegram would refuse', () => {
    const commands = toBotCommands([...COMMANDS, { name: 'Usage', description: 'Usage' }, { name: 'bad-name', description: 'x' }]);
    expect(commands.map((c) => c.command)).toEqual(['stop', 'new', 'status', 'policy', 'usage']);
  });
});

describe('TelegramChannel start', () => {
  it('refuses to be built without a token', () => {
    expect(() => new TelegramChannel(TelegramConfigSchema.parse({}), testDeps())).toThrow(ConfigError);
  });

  it('fails start with a clear ChannelError when the token is rejected', async () => {
    const fake = await startFakeTelegram();
    try {
      const channel = new TelegramChannel({ ...testConfig(fake), token: '1:wrong-token' }, testDeps(), FAST_OPTIONS);
      const error = await channel.start().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ChannelError);
      expect((error as Error).message).toMatch(/token was rejected/);
      await channel.stop();
    } finally {
      await fake.close();
    }
  });
});
