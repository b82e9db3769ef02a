/**
 * The state of the fake Discord: a main guild (and any added ones) with roles,
 * channels and threads, DM channels, users, every message (with its edit
 * history) and every interaction with the callbacks it received.
 */

/** Discord's epoch (2015-01-01), the origin of snowflake timestamps. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** Permission bits used by the fake. */
export const PERMISSIONS = {
  administrator: 1n << 3n,
  manageGuild: 1n << 5n,
  member: (1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 16n) | (1n << 38n),
} as const;

/** A guild (server). */
export interface FakeGuild {
  id: string;
  name: string;
}

/** The shard of `count` that carries a guild's events, as on Discord; DMs (no guild) go to shard 0. */
export function shardOf(guildId: string | undefined, count: number): number {
  return guildId === undefined ? 0 : Number((BigInt(guildId) >> 22n) % BigInt(count));
}

/** A user account (human or bot). */
export interface FakeUser {
  id: string;
  username: string;
  globalName: string;
  bot: boolean;
}

/** A guild role. */
export interface FakeRole {
  id: string;
  name: string;
  permissions: bigint;
  /** Set for the role Discord creates for a bot. */
  botId?: string;
}

/** A DM channel (type 1), guild text channel (type 0) or public thread (type 11). */
export interface FakeChannel {
  id: string;
  type: 0 | 1 | 11;
  name?: string;
  guildId?: string;
  parentId?: string;
  /** The other side of a DM. */
  recipientId?: string;
}

/** One version of a message, kept as the message is edited. */
export interface MessageVersion {
  content: string;
  components: unknown[];
  at: number;
}

/** A message, by a user or by the bot (directly or as an interaction reply). */
export interface StoredMessage {
  id: string;
  channelId: string;
  authorId: string;
  content: string;
  components: unknown[];
  /** 64 ephemeral, 128 loading (deferred reply). */
  flags: number;
  mentionIds: string[];
  mentionRoleIds: string[];
  mentionEveryone: boolean;
  replyToId?: string;
  /** Attachments, as the message's JSON carries them. */
  attachments?: Record<string, unknown>[];
  nonce?: string;
  /** Set for interaction replies and follow-ups. */
  interactionId?: string;
  /** For ephemeral messages: the only user who sees it. */
  visibleTo?: string;
  deleted: boolean;
  createdAt: number;
  editedAt?: number;
  history: MessageVersion[];
}

/** What the bot answered to an interaction, in order. */
export interface InteractionCallback {
  type: number;
  data: Record<string, unknown> | undefined;
  at: number;
}

/** An interaction the fake dispatched. */
export interface FakeInteraction {
  id: string;
  token: string;
  /** 2 command, 3 component, 4 autocomplete. */
  type: 2 | 3 | 4;
  userId: string;
  channelId: string;
  guildId?: string;
  data: Record<string, unknown>;
  /** The message a pressed button belongs to. */
  messageId?: string;
  createdAt: number;
  callbacks: InteractionCallback[];
  originalMessageId?: string;
  followupIds: string[];
}

/** Everything the fake knows; mutated by the REST routes and the test helpers. */
export class World {
  readonly applicationId: string;
  readonly bot: FakeUser;
  readonly owner: FakeUser;
  /** The main guild, where `roles` and the members are. */
  readonly guild: FakeGuild;
  /** Every guild the bot is in, the main one first. */
  readonly guilds: FakeGuild[] = [];
  readonly roles: { everyone: FakeRole; admin: FakeRole; manager: FakeRole; bot: FakeRole };
  readonly users = new Map<string, FakeUser>();
  /** Role ids of each guild member, by user id. */
  readonly members = new Map<string, string[]>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages: StoredMessage[] = [];
  readonly interactions: FakeInteraction[] = [];
  private counter = 0;

  constructor(readonly token: string) {
    this.bot = this.addUser('pincer', true);
    this.applicationId = this.bot.id;
    this.owner = this.addUser('guild-owner');
    const guildId = this.nextId();
    this.guild = { id: guildId, name: 'Pincer Test Guild' };
    this.guilds.push(this.guild);
    this.roles = {
      everyone: { id: guildId, name: '@everyone', permissions: PERMISSIONS.member },
      admin: { id: this.nextId(), name: 'Admin', permissions: PERMISSIONS.administrator },
      manager: { id: this.nextId(), name: 'Manager', permissions: PERMISSIONS.manageGuild },
      bot: { id: this.nextId(), name: 'pincer', permissions: PERMISSIONS.member, botId: this.bot.id },
    };
    this.members.set(this.bot.id, [this.roles.bot.id]);
    this.members.set(this.owner.id, []);
  }

  /** A new snowflake carrying the current time. */
  nextId(): string {
    this.counter += 1;
    return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | BigInt(this.counter % 4096)).toString();
  }

  /**
   * Adds a guild the bot is in (the members and roles of the main guild are in
   * it too), on shard `shard[0]` of `shard[1]` when given.
   */
  addGuild(name: string, shard?: [number, number]): FakeGuild {
    let id = BigInt(this.nextId());
    // A snowflake one millisecond later lands on the next shard.
    while (shard && shardOf(id.toString(), shard[1]) !== shard[0]) id += 1n << 22n;
    const guild = { id: id.toString(), name };
    this.guilds.push(guild);
    return guild;
  }

  guildById(id: string): FakeGuild | undefined {
    return this.guilds.find((guild) => guild.id === id);
  }

  /** The roles of a guild: those of the main guild, with the guild's own @everyone. */
  guildRoles(guild: FakeGuild): FakeRole[] {
    const { everyone, ...others } = this.roles;
    return [{ ...everyone, id: guild.id }, ...Object.values(others)];
  }

  /** Creates a user (not a guild member), with a given id or a new one. */
  addUser(name: string, bot = false, id?: string): FakeUser {
    if (id && this.users.has(id)) throw new Error(`fake discord: user ${id} exists`);
    const user = { id: id ?? this.nextId(), username: name.toLowerCase().replace(/[^a-z0-9_.]/g, '_'), globalName: name, bot };
    this.users.set(user.id, user);
    return user;
  }

  user(id: string): FakeUser {
    const user = this.users.get(id);
    if (!user) throw new Error(`fake discord: unknown user ${id}`);
    return user;
  }

  channel(id: string): FakeChannel | undefined {
    return this.channels.get(id);
  }

  /** The DM channel between the bot and `userId`, created on first use. */
  dmChannel(userId: string): FakeChannel {
    for (const channel of this.channels.values()) if (channel.type === 1 && channel.recipientId === userId) return channel;
    const channel: FakeChannel = { id: this.nextId(), type: 1, recipientId: userId };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** All role ids of a member, @everyone included. */
  memberRoles(userId: string): FakeRole[] {
    const ids = this.members.get(userId) ?? [];
    const all = Object.values(this.roles);
    return [this.roles.everyone, ...all.filter((role) => ids.includes(role.id))];
  }

  /** The permission bits of a member (all of them for Administrator). */
  memberPermissions(userId: string): bigint {
    const bits = this.memberRoles(userId).reduce((sum, role) => sum | role.permissions, 0n);
    return bits & PERMISSIONS.administrator ? (1n << 50n) - 1n : bits;
  }

  /** Stores a new message. */
  addMessage(fields: Partial<StoredMessage> & Pick<StoredMessage, 'channelId' | 'authorId' | 'content'>): StoredMessage {
    const now = Date.now();
    const message: StoredMessage = {
      id: this.nextId(),
      components: [],
      flags: 0,
      mentionIds: [],
      mentionRoleIds: [],
      mentionEveryone: false,
      deleted: false,
      createdAt: now,
      history: [],
      ...fields,
    };
    message.history.push({ content: message.content, components: message.components, at: now });
    this.messages.push(message);
    return message;
  }

  message(id: string): StoredMessage | undefined {
    return this.messages.find((message) => message.id === id);
  }

  /** Applies an edit and records the new version. */
  editMessage(message: StoredMessage, changes: { content?: string; components?: unknown[]; flags?: number }): void {
    if (changes.content !== undefined) message.content = changes.content;
    if (changes.components !== undefined) message.components = changes.components;
    if (changes.flags !== undefined) message.flags = changes.flags;
    message.editedAt = Date.now();
    message.history.push({ content: message.content, components: message.components, at: message.editedAt });
  }

  interactionByToken(id: string | undefined, token: string): FakeInteraction | undefined {
    return this.interactions.find((interaction) => interaction.token === token && (id === undefined || interaction.id === id));
  }
}
