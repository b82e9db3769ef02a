/**
 * Whether someone holds an admin role in a guild: Administrator or Manage
 * Server. Fails closed: anything that cannot be checked counts as not admin.
 */
import { PermissionFlagsBits, type Client } from 'discord.js';
import type { Logger } from '../../log.js';
import type { ChatInfo } from '../types.js';
import { guildIdOfScope } from './chat.js';
import { apiCodeOf } from './errors.js';

/** Discord's code for a user who is not a member of the guild. */
const UNKNOWN_MEMBER = 10007;

/**
 * True when `userId` may manage the guild of `chat`; always false in DMs.
 * `restOnly`: the client is not on the gateway, which would keep its cache of
 * roles current, so the guild and the member are fetched afresh.
 */
export async function isGuildAdmin(client: Client, chat: ChatInfo, userId: string, log: Logger, restOnly = false): Promise<boolean> {
  if (chat.kind === 'dm') return false;
  try {
    const guildId = guildIdOfScope(chat.scope) ?? (await guildIdOfChannel(client, chat.chatId, restOnly));
    if (!guildId) return false;
    const cached = restOnly ? undefined : client.guilds.cache.get(guildId);
    const guild = cached ?? (await client.guilds.fetch({ guild: guildId, force: restOnly }));
    // Served from the cache when the member is known, else `GET /guilds/:id/members/:id`.
    const member = await guild.members.fetch({ user: userId, force: restOnly });
    return member.permissions.any([PermissionFlagsBits.Administrator, PermissionFlagsBits.ManageGuild]);
  } catch (error) {
    if (apiCodeOf(error) !== UNKNOWN_MEMBER) log.warn({ err: error, userId }, 'could not check guild permissions');
    return false;
  }
}

async function guildIdOfChannel(client: Client, channelId: string, restOnly: boolean): Promise<string | undefined> {
  const channel = await client.channels.fetch(channelId, { allowUnknownGuild: restOnly });
  return channel && 'guildId' in channel ? (channel.guildId ?? undefined) : undefined;
}
