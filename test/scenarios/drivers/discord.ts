/**
 * The scenario driver over the fake Discord: the real discord.js client in
 * DiscordChannel talks REST and gateway to `test/fakes/discord`. Groups are
 * guild text channels; commands are slash-command interactions when the bot
 * registered them (typed text otherwise); prompts are messages with approval
 * buttons; private notices are ephemeral interaction replies.
 */
import { decodeApprovalPayload } from '../../../src/channels/approval-payload.js';
import { DiscordChannel } from '../../../src/channels/discord/adapter.js';
import type { PromptAction, ChannelDeps } from '../../../src/channels/types.js';
import { DiscordConfigSchema } from '../../../src/config/schema.js';
import { startFakeDiscord, type CommandOption, type FakeDiscord, type FakeUser, type StoredMessage } from '../../fakes/discord/index.js';
import { allowlistIds, type BotMessage, type ChannelSetup, type ScenarioChat, type ScenarioDriver, type ScenarioUser, type SeenApproval } from '../driver.js';

/** The driver, with the fake underneath for scenarios that need more. */
export interface DiscordDriver extends ScenarioDriver {
  /** The running fake (after `setup`). */
  readonly fake: FakeDiscord;
}

interface OptionDefinition {
  name: string;
  type: number;
  required?: boolean;
  options?: OptionDefinition[];
}

const SUBCOMMAND = 1;
const LOADING = 128;

/**
 * `users[0]` holds the Administrator role in the guild (and is the owner in the
 * scenario config); `users[1]` and `users[2]` are plain members. Ids are fixed
 * so that they are known before `setup`.
 */
export function createDiscordDriver(): DiscordDriver {
  const users: readonly ScenarioUser[] = [
    { id: '310000000000000001', name: 'Ada' },
    { id: '310000000000000002', name: 'Ben' },
    { id: '310000000000000003', name: 'Cleo' },
  ];
  const members = new Map<string, FakeUser>();
  let running: FakeDiscord | undefined;
  let latest: DiscordChannel | undefined;

  const fake = (): FakeDiscord => {
    if (!running) throw new Error('discord driver: call setup() first');
    return running;
  };
  const member = (user: ScenarioUser): FakeUser => {
    const found = members.get(user.id);
    if (!found) throw new Error(`discord driver: unknown user ${user.id}`);
    return found;
  };

  return {
    name: 'discord',
    users,
    get fake() {
      return fake();
    },
    async setup() {
      running = await startFakeDiscord();
      for (const [index, user] of users.entries()) {
        members.set(user.id, running.addMember(user.name, { id: user.id, roles: index === 0 ? ['admin'] : [] }));
      }
    },
    async teardown() {
      await latest?.stop();
      await running?.close();
      running = undefined;
    },
    createChannel(deps: ChannelDeps, setup?: ChannelSetup) {
      const { users, conversations } = allowlistIds(setup?.access);
      const config = DiscordConfigSchema.parse({ token: fake().token, apiUrl: fake().apiUrl, allowedUsers: users, allowedChannels: conversations });
      latest = new DiscordChannel(config, deps, { owners: setup?.owners ?? [] });
      return latest;
    },
    dm: (user) => ({ kind: 'dm', id: fake().dmChannel(member(user)).id }),
    group() {
      const channel = fake().createTextChannel();
      return { kind: 'group', id: channel.id, title: `#${channel.name}` };
    },
    async sendMessage(chat, user, text, options = {}) {
      const discord = fake();
      const bot = discord.bot;
      const replyTo = options.replyToBot ? lastBotMessage(discord, chat.id)?.id : undefined;
      const mention = chat.kind === 'group' && options.mention;
      discord.userMessage({
        channelId: chat.id,
        author: member(user),
        content: mention ? `<@${bot.id}> ${text}` : text,
        mentions: mention || replyTo ? [bot] : [],
        replyTo,
      });
    },
    async sendFile(chat, user, text, file) {
      const discord = fake();
      const mention = chat.kind === 'group';
      discord.userMessage({
        channelId: chat.id,
        author: member(user),
        content: mention ? `<@${discord.bot.id}> ${text}` : text,
        mentions: mention ? [discord.bot] : [],
        files: [{ name: file.name, contentType: file.mimeType, bytes: file.bytes }],
      });
    },
    async sendVoice(chat, user, _text, file) {
      fake().userMessage({
        channelId: chat.id,
        author: member(user),
        content: '',
        files: [{ name: file.name, contentType: file.mimeType, bytes: file.bytes }],
        voice: { durationSecs: file.durationSecs },
      });
    },
    async sendCommand(chat, user, name, args = '') {
      const discord = fake();
      const options = slashOptions(registeredCommand(discord, name), args);
      if (options) discord.runCommand(member(user), chat.id, name, options);
      else discord.userMessage({ channelId: chat.id, author: member(user), content: `/${name}${args ? ` ${args}` : ''}` });
    },
    async pressApproval(_chat: ScenarioChat, user, approval: SeenApproval, action: PromptAction) {
      const discord = fake();
      const message = discord.message(approval.messageId);
      if (!message) throw new Error(`discord driver: no message ${approval.messageId}`);
      const customId = message.history
        .flatMap((version) => buttonIds(version.components))
        .find((id) => decodeApprovalPayload(id)?.action === action);
      if (!customId) throw new Error(`discord driver: message ${approval.messageId} never had a ${action} button`);
      discord.pressButton(member(user), message.id, customId);
    },
    messages: (chat): BotMessage[] =>
      botMessages(fake(), chat.id)
        .filter((message) => !isPrompt(message))
        .map((message) => ({ messageId: message.id, text: readable(message.content) })),
    approvals: (chat): SeenApproval[] =>
      botMessages(fake(), chat.id)
        .filter(isPrompt)
        .map((message) => ({
          messageId: message.id,
          text: readable(message.content),
          actions: buttonIds(message.components).flatMap((id) => decodeApprovalPayload(id)?.action ?? []),
        })),
    sentFiles: (chat) =>
      fake()
        .uploads.filter((upload) => upload.channelId === chat.id)
        .map(({ name, size, sha256, caption, contentType }) => ({ name, size, sha256, ...(caption ? { caption } : {}), shownAs: contentType?.startsWith('image/') ? 'photo' : 'document' })),
    failNextUpload: (failure) => fake().failNext('POST', /^\/channels\/\d+\/messages$/, { status: failure === 'too-large' ? 413 : 429, retryAfter: 1, withFiles: true }),
    privateNotices: (user) =>
      fake()
        .ephemeralFor(user.id)
        .filter((message) => !message.deleted && message.content)
        .map((message) => readable(message.content)),
  };
}

/** Visible bot messages of a channel: not deleted, not ephemeral, not a "thinking…" placeholder. */
function botMessages(discord: FakeDiscord, channelId: string): StoredMessage[] {
  return discord
    .messagesIn(channelId)
    .filter((message) => message.authorId === discord.bot.id && !message.deleted && !message.visibleTo)
    .filter((message) => !(message.flags & LOADING && !message.content));
}

function lastBotMessage(discord: FakeDiscord, channelId: string): StoredMessage | undefined {
  return botMessages(discord, channelId).at(-1);
}

/** A prompt is a message that carries (or carried) approval buttons. */
function isPrompt(message: StoredMessage): boolean {
  return message.history.some((version) => buttonIds(version.components).some((id) => decodeApprovalPayload(id)));
}

function buttonIds(components: unknown[]): string[] {
  return (components as { components?: { custom_id?: string }[] }[]).flatMap((row) =>
    (row.components ?? []).flatMap((button) => (button.custom_id ? [button.custom_id] : [])),
  );
}

function registeredCommand(discord: FakeDiscord, name: string): OptionDefinition[] | undefined {
  const command = [...discord.commands.values()].flat().find((candidate) => candidate.name === name);
  return command ? ((command.options as OptionDefinition[] | undefined) ?? []) : undefined;
}

/**
 * The interaction options a user would fill in for `args`, or undefined when
 * the command cannot be run as a slash command (not registered, or required
 * options missing) and would be typed as text instead.
 */
function slashOptions(definitions: OptionDefinition[] | undefined, args: string): CommandOption[] | undefined {
  if (!definitions) return undefined;
  const words = args.trim() ? args.trim().split(/\s+/) : [];
  const subcommands = definitions.filter((definition) => definition.type === SUBCOMMAND);
  if (!subcommands.length) return fill(definitions, words);
  const sub = subcommands.find((definition) => definition.name === words[0]);
  const nested = sub && fill(sub.options ?? [], words.slice(1));
  return sub && nested ? [{ type: SUBCOMMAND, name: sub.name, options: nested }] : undefined;
}

/** Words into options in order; the last option takes the rest of the line. */
function fill(definitions: OptionDefinition[], words: string[]): CommandOption[] | undefined {
  const options: CommandOption[] = [];
  for (const [index, definition] of definitions.entries()) {
    const value = index === definitions.length - 1 ? words.slice(index).join(' ') : words[index];
    if (value) options.push({ type: definition.type, name: definition.name, value });
    else if (definition.required) return undefined;
  }
  return definitions.length || !words.length ? options : undefined;
}

/** The text as a reader sees it once Discord renders the markdown: emphasis and code markers gone. */
function readable(markdown: string): string {
  return markdown
    .split('\n')
    .filter((line) => !/^\s*(```|~~~)/.test(line))
    .join('\n')
    .replace(/\*\*|__|~~|`/g, '');
}
