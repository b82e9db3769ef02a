/**
 * Telegram's side of the access rule (../access.ts): it has users and chats,
 * no workspaces; a DM is governed by `allowedUsers`, a group by both lists.
 * A refused DM may get a reply, at most once per user per interval: the
 * configured `deniedReply`, or for a command the shared "not available" text.
 */
import { admits, allowlists, NOT_AVAILABLE, ownerIdsOn, type Allowlists } from '../access.js';
import type { ChannelState, ChatKind } from '../types.js';
import { TELEGRAM } from './chat.js';

/** The allowlist part of the `telegram` config. */
export interface AccessConfig {
  allowedUsers: string[];
  allowedChats: string[];
  deniedReply?: string | undefined;
}

/** Decides access and paces the replies to refused DMs. */
export class AccessPolicy {
  /** The lists in the rule's terms. */
  readonly lists: Allowlists;
  private readonly lastDenied = new Map<string, number>();

  /** `owners` as in config (`telegram:42`); other platforms' owners are skipped. */
  constructor(
    private readonly config: AccessConfig,
    private readonly state: ChannelState,
    private readonly deniedIntervalMs: number,
    owners: readonly string[] = [],
  ) {
    this.lists = allowlists({ users: config.allowedUsers, conversations: config.allowedChats, owners: ownerIdsOn(owners, TELEGRAM) });
  }

  /** Whether an update from `userId` in the chat `chatId` (a DM or a group) is served. */
  allows(kind: ChatKind, chatId: string, userId: string): boolean {
    return admits(this.lists, { kind, userId, workspaceId: null, conversationId: chatId });
  }

  /**
   * The reply for a refused DM from `userId`: `deniedReply`, or for a command
   * the "not available" text when none is configured. Undefined when there is
   * none, or one was sent within the interval (also across restarts).
   */
  async deniedReplyFor(userId: string, now: number, command = false): Promise<string | undefined> {
    const reply = this.config.deniedReply ?? (command ? NOT_AVAILABLE : undefined);
    if (!reply) return undefined;
    const last = this.lastDenied.get(userId);
    if (last !== undefined && now - last < this.deniedIntervalMs) return undefined;
    this.lastDenied.set(userId, now);
    const key = `denied:${userId}`;
    if ((await this.state.get(key)) !== undefined) return undefined;
    await this.state.set(key, now, this.deniedIntervalMs);
    return reply;
  }
}
