/**
 * Who may use the bot: one rule for every channel. An adapter maps its
 * platform's ids to an {@link AccessRequest} and its config to
 * {@link Allowlists}; {@link admits} decides.
 *
 * The rule:
 * - each configured (non-empty) list must admit the event; an empty list
 *   admits everyone, so with no list configured anyone who can reach the bot
 *   may use it;
 * - users: the sender's platform id; the owners of that platform (config
 *   `owners`) count as listed users, so a user list never locks them out;
 * - workspaces (Discord guild, Slack team): the event's workspace. A DM that
 *   belongs to no workspace (Discord, Telegram) is not subject to this list;
 *   a Slack DM carries its team and is;
 * - conversations (Telegram chat, Discord channel or a thread of a listed
 *   channel, Slack channel): group conversations only; DMs are governed by the
 *   user list.
 *
 * @example
 * // allowedUsers: [me], allowedChats: [group]: me, in DMs and in that group.
 * const lists = allowlists({ users: ['me'], conversations: ['group'] });
 * admits(lists, { kind: 'dm', userId: 'me', conversationId: 'me' }); // true
 * admits(lists, { kind: 'group', userId: 'me', conversationId: 'other' }); // false
 * admits(lists, { kind: 'group', userId: 'you', conversationId: 'group' }); // false
 */
import type { ChatKind } from './types.js';

/**
 * What a command or button press from outside the allowlists is told, on
 * every channel. Messages from outside are ignored silently.
 */
export const NOT_AVAILABLE = 'pincer is not available to you here.';

/** A channel's allowlists in the rule's terms; an empty list admits everyone. */
export interface Allowlists {
  /** Platform user ids. */
  users: readonly string[];
  /** Workspace ids: Discord guilds, Slack teams (Telegram has none). */
  workspaces: readonly string[];
  /** Group conversation ids: Telegram chats, Discord channels, Slack channels. */
  conversations: readonly string[];
  /** The platform ids of the owners, admitted as listed users whatever `users` holds. */
  owners: readonly string[];
}

/** Where an event comes from, in the rule's terms. */
export interface AccessRequest {
  kind: ChatKind;
  /** The sender's platform id. */
  userId: string;
  /**
   * The workspace the event belongs to; `null` for a DM that belongs to none
   * (Discord, Telegram), undefined when the platform did not say (refused by a
   * workspace list).
   */
  workspaceId?: string | null | undefined;
  /** The chat or channel id. */
  conversationId: string;
  /** The channel a thread belongs to: a thread of a listed channel is listed. */
  parentId?: string | null | undefined;
}

/**
 * Allowlists from whatever lists a channel has, ids trimmed.
 * @example allowlists({ users: config.allowedUsers, conversations: config.allowedChats, owners })
 */
export function allowlists(lists: Partial<Allowlists>): Allowlists {
  return {
    users: trimmed(lists.users),
    workspaces: trimmed(lists.workspaces),
    conversations: trimmed(lists.conversations),
    owners: trimmed(lists.owners),
  };
}

/** Whether the allowlists admit an event from `request`. */
export function admits(lists: Allowlists, request: AccessRequest): boolean {
  return admitsUser(lists, request.userId) && admitsWorkspace(lists, request) && admitsConversation(lists, request);
}

/**
 * The ids of the owners on one platform, from config `owners` (`platform:userId`).
 * @example ownerIdsOn(['telegram:42', 'slack:U01'], 'telegram') // ['42']
 */
export function ownerIdsOn(owners: readonly string[], platform: string): string[] {
  const prefix = `${platform}:`;
  return owners.filter((owner) => owner.startsWith(prefix)).map((owner) => owner.slice(prefix.length));
}

/**
 * A warning for lists that close groups but leave DMs open to everyone (a
 * conversation list without a user list), or undefined.
 */
export function openDmWarning(lists: Allowlists): string | undefined {
  if (lists.conversations.length === 0 || lists.users.length > 0) return undefined;
  return 'a conversation allowlist is set but no user allowlist: direct messages are open to everyone (list users to close them; owners are always admitted)';
}

function admitsUser(lists: Allowlists, userId: string): boolean {
  return lists.users.length === 0 || lists.users.includes(userId) || lists.owners.includes(userId);
}

function admitsWorkspace(lists: Allowlists, request: AccessRequest): boolean {
  if (lists.workspaces.length === 0) return true;
  if (request.kind === 'dm' && request.workspaceId === null) return true;
  return listed(lists.workspaces, request.workspaceId);
}

function admitsConversation(lists: Allowlists, request: AccessRequest): boolean {
  if (lists.conversations.length === 0 || request.kind === 'dm') return true;
  return listed(lists.conversations, request.conversationId) || listed(lists.conversations, request.parentId);
}

function listed(list: readonly string[], id: string | null | undefined): boolean {
  return typeof id === 'string' && list.includes(id);
}

function trimmed(list: readonly string[] | undefined): string[] {
  return (list ?? []).map((id) => id.trim()).filter((id) => id !== '');
}
