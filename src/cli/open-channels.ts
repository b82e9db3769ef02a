/**
 * Channels that admit everyone. The access rule (`channels/access.ts`) is
 * asked about a stranger: someone no list names, writing a DM. With no user
 * allowlist, that stranger gets in, so anyone who finds the bot can use it and
 * its tools. `start` warns about such a channel, and `doctor` also fails when
 * one of them lets people act on this machine without an admin asking policy.
 */
import { admits, allowlists, ownerIdsOn, type Allowlists } from '../channels/access.js';
import { discordAllowlists } from '../channels/discord/access.js';
import { slackAllowlists } from '../channels/slack/access.js';
import type { Config } from '../config/schema.js';

/** The chat platforms that have allowlists. */
export type ListedChannel = 'telegram' | 'discord' | 'slack';

/** A configured channel and what its allowlists admit. */
export interface ChannelAccess {
  channel: ListedChannel;
  lists: Allowlists;
  /** True when someone nobody listed may use it. */
  open: boolean;
}

/** An id no allowlist holds. */
const STRANGER = '\u0000nobody-listed';

/**
 * Tools with which a person acts on this machine: the shell (when enabled)
 * and writing files. On an open channel they need an admin policy of `ask`
 * (or `disable`) in the global scope, which is the scope of every DM.
 */
export function machineTools(config: Pick<Config, 'tools'>): string[] {
  return [...(config.tools.shell.enabled ? ['shell'] : []), 'files_write'];
}

/** Every configured chat channel (its token is set), with what its lists admit. */
export function channelAccess(config: Config): ChannelAccess[] {
  const channels: Array<{ channel: ListedChannel; lists: Allowlists }> = [];
  if (config.telegram.token) {
    const lists = allowlists({ users: config.telegram.allowedUsers, conversations: config.telegram.allowedChats, owners: ownerIdsOn(config.owners, 'telegram') });
    channels.push({ channel: 'telegram', lists });
  }
  if (config.discord.token) channels.push({ channel: 'discord', lists: discordAllowlists(config.discord, config.owners) });
  if (config.slack.botToken) channels.push({ channel: 'slack', lists: slackAllowlists({ ...config.slack, owners: config.owners }) });
  return channels.map((entry) => ({ ...entry, open: admitsStrangers(entry.lists) }));
}

/** Whether someone no list names may write the bot a DM (in a workspace the lists allow, if any). */
export function admitsStrangers(lists: Allowlists): boolean {
  return admits(lists, { kind: 'dm', userId: STRANGER, workspaceId: lists.workspaces[0] ?? null, conversationId: STRANGER });
}

/** What an open channel means, naming it, in one sentence. */
export function openChannelText(channel: ListedChannel): string {
  return `${channel} admits everyone: ${channel}.allowedUsers is empty, so anyone who finds the bot can talk to it and use its tools (each in their own workspace)`;
}

/** How to close a channel. */
export function closeChannelFix(channel: ListedChannel): string {
  return `list who may use it in ${channel}.allowedUsers in the config file (the owners are always admitted), or run pincer init again`;
}
