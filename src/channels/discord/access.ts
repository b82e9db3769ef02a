/**
 * Discord's side of the access rule (../access.ts): guilds are its
 * workspaces, guild channels its conversations (a thread counts as its parent
 * channel); a DM belongs to no guild and is governed by `allowedUsers`.
 */
import { admits, allowlists, ownerIdsOn, type Allowlists } from '../access.js';
import type { DiscordConfig } from './client.js';

/** Who did something, and where. */
export interface Origin {
  userId: string;
  guildId: string | null;
  channelId: string;
  /** The parent channel of a thread: a thread of an allowed channel is allowed. */
  parentId?: string | null;
}

/** The allowlist keys of the config, and config `owners` (`discord:123`, ...). */
export function discordAllowlists(config: Pick<DiscordConfig, 'allowedGuilds' | 'allowedChannels' | 'allowedUsers'>, owners: readonly string[]): Allowlists {
  return allowlists({
    users: config.allowedUsers,
    workspaces: config.allowedGuilds,
    conversations: config.allowedChannels,
    owners: ownerIdsOn(owners, 'discord'),
  });
}

/** Whether an event from `origin` may reach the agent. */
export function isAllowed(lists: Allowlists, origin: Origin): boolean {
  return admits(lists, {
    kind: origin.guildId ? 'group' : 'dm',
    userId: origin.userId,
    workspaceId: origin.guildId,
    conversationId: origin.channelId,
    parentId: origin.parentId,
  });
}
