import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatInfoOf } from '../../../src/channels/discord/chat.js';
import type { ChatInfo } from '../../../src/channels/types.js';
import type { FakeUser } from '../../fakes/discord/index.js';
import { startHarness, type Harness } from './harness.js';

describe('discord isAdmin', () => {
  let h: Harness;
  const users: Record<string, FakeUser> = {};
  let guildChat: ChatInfo;

  beforeAll(async () => {
    h = await startHarness({
      prepare: (discord) => {
        users.admin = discord.addMember('Admin', { roles: ['admin'] });
        users.manager = discord.addMember('Manager', { roles: ['manager'] });
        users.member = discord.addMember('Member');
        users.listedAdmin = discord.addMember('Listed', { roles: ['admin'], listed: true });
        users.stranger = discord.addUser('Stranger');
      },
    });
    guildChat = chatInfoOf({ channelId: h.discord.general.id, guildId: h.discord.guildId, channelName: 'general' });
  });
  afterAll(() => h.close());

  it('is true for Administrator and Manage Server, fetching members that are not cached', async () => {
    expect(await h.channel.isAdmin(guildChat, users.admin!.id)).toBe(true);
    expect(await h.channel.isAdmin(guildChat, users.manager!.id)).toBe(true);
    const fetched = h.discord.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`/guilds/${h.discord.guildId}/members/`));
    expect(fetched.map((r) => r.path.split('/').at(-1))).toEqual([users.admin!.id, users.manager!.id]);
  });

  it('uses a cached member without asking the API', async () => {
    const before = h.discord.requests.length;
    expect(await h.channel.isAdmin(guildChat, users.listedAdmin!.id)).toBe(true);
    expect(h.discord.requests.length).toBe(before);
  });

  it('is false for a plain member, a non-member and in DMs', async () => {
    expect(await h.channel.isAdmin(guildChat, users.member!.id)).toBe(false);
    expect(await h.channel.isAdmin(guildChat, users.stranger!.id)).toBe(false);
    const dm = chatInfoOf({ channelId: h.discord.dmChannel(users.admin!).id, guildId: null });
    expect(await h.channel.isAdmin(dm, users.admin!.id)).toBe(false);
  });
});
