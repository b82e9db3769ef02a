/**
 * Who may use the bot. With `allowedUsers` or `allowedChats` configured, an
 * update counts only when its sender is a listed user or its chat a listed
 * chat; with neither, everyone who can reach the bot may use it. A refused DM
 * may get the configured `deniedReply`, at most once per user per interval.
 */
import type { ChannelState } from '../types.js';

/** The allowlist part of the `telegram` config. */
export interface AccessConfig {
  allowedUsers: string[];
  allowedChats: string[];
  deniedReply?: string | undefined;
}

/** Decides access and paces the denied-access reply. */
export class AccessPolicy {
  private readonly users: ReadonlySet<string>;
  private readonly chats: ReadonlySet<string>;
  private readonly lastDenied = new Map<string, number>();

  constructor(
    private readonly config: AccessConfig,
    private readonly state: ChannelState,
    private readonly deniedIntervalMs: number,
  ) {
    this.users = new Set(config.allowedUsers.map((id) => id.trim()));
    this.chats = new Set(config.allowedChats.map((id) => id.trim()));
  }

  /** Whether an update from `userId` in `chatId` is served. */
  allows(chatId: string, userId: string): boolean {
    if (this.users.size === 0 && this.chats.size === 0) return true;
    return this.users.has(userId) || this.chats.has(chatId);
  }

  /**
   * The reply for a refused DM from `userId`, or undefined when none is
   * configured or one was sent within the interval (also across restarts).
   */
  async deniedReplyFor(userId: string, now: number): Promise<string | undefined> {
    const reply = this.config.deniedReply;
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
