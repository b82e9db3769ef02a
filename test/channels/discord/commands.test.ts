import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_AVAILABLE } from '../../../src/channels/access.js';
import type { InboundCommand } from '../../../src/channels/types.js';
import type { FakeInteraction, FakeUser } from '../../fakes/discord/index.js';
import { startHarness, type Harness } from './harness.js';

const SUBCOMMAND = 1;
const STRING = 3;
const EPHEMERAL = 64;

const isCommand = (event: { type: string }) => event.type === 'command';

describe('discord slash commands', () => {
  let h: Harness;
  let admin: FakeUser;
  let member: FakeUser;

  beforeAll(async () => {
    h = await startHarness({
      prepare: (discord) => {
        admin = discord.addMember('Ada', { roles: ['admin'] });
        member = discord.addMember('Max');
      },
    });
  });
  afterAll(() => h.close());

  const firstCallback = (interaction: FakeInteraction, timeoutMs = 5_000) =>
    h.discord.waitFor(() => interaction.callbacks[0], timeoutMs);

  it('registers the commands globally with PUT on start, /policy with subcommands and tool autocomplete', () => {
    const put = h.discord.requests.find((r) => r.method === 'PUT');
    expect(put?.path).toBe(`/applications/${h.discord.applicationId}/commands`);
    const commands = h.discord.commands.get('global')!;
    expect(commands.map((c) => c.name)).toEqual(
      expect.arrayContaining(['stop', 'new', 'status', 'tools', 'usage', 'policy', 'help', 'shutdown', 'interrupt']),
    );
    expect(commands.every((c) => (c.contexts as number[]).includes(1))).toBe(true);
    const policy = commands.find((c) => c.name === 'policy')!;
    const subcommands = policy.options as { name: string; type: number; options: Record<string, unknown>[] }[];
    expect(subcommands.map((s) => [s.name, s.type])).toEqual([
      ['list', SUBCOMMAND],
      ['allow', SUBCOMMAND],
      ['ask', SUBCOMMAND],
      ['disable', SUBCOMMAND],
      ['reset', SUBCOMMAND],
    ]);
    const allow = subcommands.find((s) => s.name === 'allow')!;
    expect(allow.options[0]).toMatchObject({ name: 'tool', type: STRING, required: true, autocomplete: true });
    expect(allow.options[1]).toMatchObject({ name: 'scope', required: false, choices: [{ value: 'here' }, { value: 'global' }] });
  });

  it('turns a slash command into an InboundCommand with the arguments in order', async () => {
    h.discord.runCommand(admin, h.discord.general.id, 'policy', [
      {
        type: SUBCOMMAND,
        name: 'allow',
        options: [
          { type: STRING, name: 'scope', value: 'global' },
          { type: STRING, name: 'tool', value: 'http_fetch' },
        ],
      },
    ]);
    const command = await h.events.next<InboundCommand>(isCommand);
    expect(command).toMatchObject({
      type: 'command',
      name: 'policy',
      args: 'allow http_fetch global',
      chat: { chatId: h.discord.general.id, kind: 'group', scope: `discord:guild:${h.discord.guildId}` },
      sender: { id: admin.id, name: 'Ada' },
    });
    await command.respond!({ text: 'ok' });
  });

  it('answers respond({private: true}) with an ephemeral reply that only the caller sees', async () => {
    const dm = h.discord.dmChannel(member);
    const interaction = h.discord.runCommand(member, dm.id, 'status');
    const command = await h.events.next<InboundCommand>(isCommand);
    expect(command.chat).toMatchObject({ chatId: dm.id, kind: 'dm', scope: 'global' });
    await command.respond!({ text: 'Only admins can do that.', private: true });
    const callback = await firstCallback(interaction);
    expect(callback.type).toBe(4);
    expect(Number(callback.data?.flags) & EPHEMERAL).toBe(EPHEMERAL);
    expect(h.discord.ephemeralFor(member.id).map((m) => m.content)).toContain('Only admins can do that.');
    expect(h.discord.messagesIn(dm.id).filter((m) => !m.visibleTo)).toHaveLength(0);
  });

  it('answers a public respond in the channel for everyone', async () => {
    const interaction = h.discord.runCommand(member, h.discord.general.id, 'stop');
    const command = await h.events.next<InboundCommand>(isCommand);
    await command.respond!({ text: 'Stopped.' });
    const callback = await firstCallback(interaction);
    expect(callback.type).toBe(4);
    expect(Number(callback.data?.flags ?? 0) & EPHEMERAL).toBe(0);
    const reply = h.discord.message(interaction.originalMessageId!)!;
    expect(reply).toMatchObject({ content: 'Stopped.', channelId: h.discord.general.id, visibleTo: undefined });
  });

  it('continues a long answer in follow-ups of at most 2,000 characters', async () => {
    const interaction = h.discord.runCommand(member, h.discord.general.id, 'help');
    const command = await h.events.next<InboundCommand>(isCommand);
    const paragraphs = Array.from({ length: 6 }, (_, i) => `${i}:${'x'.repeat(700)}`);
    await command.respond!({ text: paragraphs.join('\n\n') });
    const ids = [interaction.originalMessageId!, ...interaction.followupIds];
    const parts = ids.map((id) => h.discord.message(id)!.content);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.every((part) => part.length <= 2000)).toBe(true);
    expect(parts.join('\n\n').split('\n\n')).toEqual(paragraphs);
  });

  it('defers within 3 s when the agent is slow, then delivers public and private answers', async () => {
    const slowPublic = h.discord.runCommand(member, h.discord.general.id, 'usage');
    const publicCommand = await h.events.next<InboundCommand>(isCommand);
    const slowPrivate = h.discord.runCommand(member, h.discord.general.id, 'tools');
    const privateCommand = await h.events.next<InboundCommand>(isCommand);

    for (const interaction of [slowPublic, slowPrivate]) {
      const callback = await firstCallback(interaction, 3_500);
      expect(callback.type).toBe(5);
      expect(callback.at - interaction.createdAt).toBeLessThan(3_000);
    }

    await publicCommand.respond!({ text: 'Today: 1,234 tokens.' });
    expect(h.discord.message(slowPublic.originalMessageId!)).toMatchObject({ content: 'Today: 1,234 tokens.', flags: 0, deleted: false });

    await privateCommand.respond!({ text: 'Your tools: http_fetch', private: true });
    expect(h.discord.message(slowPrivate.originalMessageId!)!.deleted).toBe(true);
    const notice = h.discord.ephemeralFor(member.id).at(-1)!;
    expect(notice.content).toBe('Your tools: http_fetch');
    expect(notice.interactionId).toBe(slowPrivate.id);
  });

  it('autocompletes tool names for the tool option', async () => {
    const interaction = h.discord.autocomplete(admin, h.discord.general.id, 'policy', [
      { type: SUBCOMMAND, name: 'allow', options: [{ type: STRING, name: 'tool', value: 'mem', focused: true }] },
    ]);
    const callback = await firstCallback(interaction);
    expect(callback.type).toBe(8);
    expect((callback.data?.choices as { name: string }[]).map((c) => c.name)).toEqual(['memory_search', 'memory_write']);
  });
});

describe('discord slash commands under config', () => {
  it('registers in each configured guild instead of globally', async () => {
    const h = await startHarness({ config: (discord) => ({ commandGuildIds: [discord.guildId] }) });
    try {
      expect(h.discord.commands.has('global')).toBe(false);
      expect(h.discord.commands.get(h.discord.guildId)?.map((c) => c.name)).toContain('policy');
      expect(h.discord.requests.filter((r) => r.method === 'PUT').map((r) => r.path)).toEqual([
        `/applications/${h.discord.applicationId}/guilds/${h.discord.guildId}/commands`,
      ]);
    } finally {
      await h.close();
    }
  });

  it('refuses a slash command from a user outside the allowlist, privately', async () => {
    const users: Record<string, FakeUser> = {};
    const h = await startHarness({
      prepare: (discord) => {
        users.allowed = discord.addMember('Allowed');
        users.other = discord.addMember('Other');
      },
      config: () => ({ allowedUsers: [users.allowed!.id] }),
    });
    try {
      const refused = h.discord.runCommand(users.other!, h.discord.general.id, 'status');
      const callback = await h.discord.waitFor(() => refused.callbacks[0]);
      expect(callback).toMatchObject({ type: 4, data: { content: NOT_AVAILABLE, flags: EPHEMERAL } });
      h.discord.runCommand(users.allowed!, h.discord.general.id, 'status');
      const command = await h.events.next<InboundCommand>();
      expect(command.sender.id).toBe(users.allowed!.id);
    } finally {
      await h.close();
    }
  });
});
