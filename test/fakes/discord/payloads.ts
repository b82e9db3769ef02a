/**
 * The fake's state rendered as Discord API objects (snake_case JSON), shaped
 * like the real ones closely enough for discord.js to cache and use them.
 */
import type { FakeChannel, FakeGuild, FakeInteraction, FakeRole, FakeUser, StoredMessage, World } from './world.js';

type Json = Record<string, unknown>;

const JOINED_AT = '2024-01-01T00:00:00.000Z';

/** A user object. */
export function userJson(user: FakeUser): Json {
  return {
    id: user.id,
    username: user.username,
    global_name: user.globalName,
    discriminator: '0',
    avatar: null,
    bot: user.bot,
    public_flags: 0,
  };
}

/** A guild member, optionally without its user (as inside MESSAGE_CREATE). */
export function memberJson(world: World, userId: string, withUser = true): Json {
  return {
    ...(withUser ? { user: userJson(world.user(userId)) } : {}),
    roles: world.members.get(userId) ?? [],
    nick: null,
    avatar: null,
    joined_at: JOINED_AT,
    premium_since: null,
    deaf: false,
    mute: false,
    pending: false,
    flags: 0,
  };
}

/** A role. */
export function roleJson(role: FakeRole, position: number): Json {
  return {
    id: role.id,
    name: role.name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position,
    permissions: role.permissions.toString(),
    managed: Boolean(role.botId),
    mentionable: false,
    flags: 0,
    ...(role.botId ? { tags: { bot_id: role.botId } } : {}),
  };
}

/** A channel of any of the fake's kinds. */
export function channelJson(world: World, channel: FakeChannel): Json {
  if (channel.type === 1) {
    return { id: channel.id, type: 1, last_message_id: null, recipients: [userJson(world.user(channel.recipientId!))] };
  }
  const base = { id: channel.id, type: channel.type, guild_id: channel.guildId, name: channel.name, last_message_id: null };
  if (channel.type === 11) {
    return {
      ...base,
      parent_id: channel.parentId,
      owner_id: world.owner.id,
      rate_limit_per_user: 0,
      message_count: 0,
      member_count: 1,
      total_message_sent: 0,
      flags: 0,
      thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: JOINED_AT, locked: false },
    };
  }
  return { ...base, position: 0, permission_overwrites: [], parent_id: null, topic: null, nsfw: false, rate_limit_per_user: 0, flags: 0 };
}

/** The full GUILD_CREATE payload of `guild` (default the main one): roles, channels, threads and the bot's own member. */
export function guildCreateJson(world: World, memberIds: readonly string[], guild: FakeGuild = world.guild): Json {
  const channels = [...world.channels.values()].filter((channel) => channel.guildId === guild.id);
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: world.owner.id,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: world.guildRoles(guild).map((role, index) => roleJson(role, index)),
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    preferred_locale: 'en-US',
    premium_tier: 0,
    premium_progress_bar_enabled: false,
    nsfw_level: 0,
    joined_at: JOINED_AT,
    large: false,
    unavailable: false,
    member_count: world.members.size,
    voice_states: [],
    members: memberIds.map((id) => memberJson(world, id)),
    channels: channels.filter((channel) => channel.type === 0).map((channel) => channelJson(world, channel)),
    threads: channels.filter((channel) => channel.type === 11).map((channel) => channelJson(world, channel)),
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/**
 * A message as REST returns it, or (`gateway`) as MESSAGE_CREATE carries it:
 * with `member` and `channel_type`, without which discord.js drops DMs.
 */
export function messageJson(world: World, message: StoredMessage, gateway = false): Json {
  const channel = world.channel(message.channelId);
  const referenced = message.replyToId ? world.message(message.replyToId) : undefined;
  const interaction = message.interactionId ? world.interactions.find((i) => i.id === message.interactionId) : undefined;
  return {
    id: message.id,
    channel_id: message.channelId,
    ...(channel?.guildId ? { guild_id: channel.guildId } : {}),
    author: userJson(world.user(message.authorId)),
    content: message.content,
    timestamp: new Date(message.createdAt).toISOString(),
    edited_timestamp: message.editedAt ? new Date(message.editedAt).toISOString() : null,
    tts: false,
    mention_everyone: message.mentionEveryone,
    mentions: message.mentionIds.map((id) => userJson(world.user(id))),
    mention_roles: message.mentionRoleIds,
    attachments: message.attachments ?? [],
    embeds: [],
    reactions: [],
    components: message.components,
    pinned: false,
    type: interaction ? 20 : referenced ? 19 : 0,
    flags: message.flags,
    ...(message.nonce ? { nonce: message.nonce } : {}),
    ...(interaction ? { application_id: world.applicationId, webhook_id: world.applicationId, interaction_metadata: interactionMetadata(world, interaction) } : {}),
    ...(referenced
      ? { message_reference: { type: 0, message_id: referenced.id, channel_id: referenced.channelId, guild_id: channel?.guildId }, referenced_message: messageJson(world, referenced) }
      : {}),
    ...(gateway ? gatewayExtras(world, message, channel) : {}),
  };
}

function gatewayExtras(world: World, message: StoredMessage, channel: FakeChannel | undefined): Json {
  const inGuild = Boolean(channel?.guildId) && world.members.has(message.authorId);
  return { channel_type: channel?.type ?? 0, ...(inGuild ? { member: memberJson(world, message.authorId, false) } : {}) };
}

/** Without `authorizing_integration_owners`, discord.js fails on `editReply`. */
function interactionMetadata(world: World, interaction: FakeInteraction): Json {
  return {
    id: interaction.id,
    type: interaction.type,
    user: userJson(world.user(interaction.userId)),
    authorizing_integration_owners: interaction.guildId ? { '0': interaction.guildId } : { '1': interaction.userId },
  };
}

/** The INTERACTION_CREATE payload. */
export function interactionJson(world: World, interaction: FakeInteraction): Json {
  const channel = world.channel(interaction.channelId)!;
  const user = userJson(world.user(interaction.userId));
  const pressed = interaction.messageId ? world.message(interaction.messageId) : undefined;
  const who = interaction.guildId
    ? { member: { ...memberJson(world, interaction.userId), permissions: world.memberPermissions(interaction.userId).toString() } }
    : { user };
  return {
    id: interaction.id,
    application_id: world.applicationId,
    type: interaction.type,
    data: interaction.data,
    ...(interaction.guildId ? { guild_id: interaction.guildId, guild_locale: 'en-US', guild: { id: interaction.guildId, locale: 'en-US', features: [] } } : {}),
    channel_id: channel.id,
    channel: channelJson(world, channel),
    ...who,
    token: interaction.token,
    version: 1,
    locale: 'en-US',
    app_permissions: world.memberPermissions(world.bot.id).toString(),
    entitlements: [],
    authorizing_integration_owners: interaction.guildId ? { '0': interaction.guildId } : { '1': interaction.userId },
    context: interaction.guildId ? 0 : 1,
    attachment_size_limit: 10_485_760,
    ...(pressed ? { message: messageJson(world, pressed) } : {}),
  };
}
