/**
 * The configured allowlists. Each list, when not empty, admits only its ids;
 * DMs are checked against the user list only, since they have no guild or
 * guild channel.
 */
import type { DiscordConfig } from './client.js';

/** Who did something, and where. */
export interface Origin {
  userId: string;
  guildId: string | null;
  channelId: string;
  /** The parent channel of a thread: a thread of an allowed channel is allowed. */
  parentId?: string | null;
}

/** The allowlist keys of the config. */
export type Allowlists = Pick<DiscordConfig, 'allowedGuilds' | 'allowedChannels' | 'allowedUsers'>;

/** Whether an event from `origin` may reach the agent. */
export function isAllowed(lists: Allowlists, origin: Origin): boolean {
  if (!admits(lists.allowedUsers, origin.userId)) return false;
  if (!origin.guildId) return true;
  if (!admits(lists.allowedGuilds, origin.guildId)) return false;
  return admits(lists.allowedChannels, origin.channelId) || admitsListed(lists.allowedChannels, origin.parentId);
}

function admits(list: readonly string[], id: string): boolean {
  return list.length === 0 || list.includes(id);
}

function admitsListed(list: readonly string[], id: string | null | undefined): boolean {
  return Boolean(id) && list.includes(id as string);
}
