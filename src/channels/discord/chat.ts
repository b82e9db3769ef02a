/**
 * How a Discord channel maps onto a pincer conversation: every DM channel,
 * guild text channel and thread is its own thread key, DMs use the global policy
 * scope and guild channels their guild's scope.
 */
import type { ChatInfo } from '../types.js';

/** What is known about where an event happened. */
export interface DiscordPlace {
  channelId: string;
  /** Absent for DMs. */
  guildId: string | null;
  channelName?: string | null;
  guildName?: string | null;
}

const SCOPE_PREFIX = 'discord:guild:';

/** The chat of a Discord channel or thread. */
export function chatInfoOf(place: DiscordPlace): ChatInfo {
  const address = { channel: 'discord', chatId: place.channelId };
  if (!place.guildId) return { ...address, kind: 'dm', scope: 'global' };
  return { ...address, kind: 'group', scope: `${SCOPE_PREFIX}${place.guildId}`, title: titleOf(place) };
}

/** The guild id behind a `discord:guild:<id>` scope, if it is one. */
export function guildIdOfScope(scope: string): string | undefined {
  return scope.startsWith(SCOPE_PREFIX) ? scope.slice(SCOPE_PREFIX.length) : undefined;
}

function titleOf(place: DiscordPlace): string | undefined {
  const channel = place.channelName ? `#${place.channelName}` : undefined;
  if (channel && place.guildName) return `${channel} (${place.guildName})`;
  return channel ?? place.guildName ?? undefined;
}
