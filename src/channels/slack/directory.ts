/**
 * Cached look-ups of users and conversations. Slack events carry ids only, and
 * every message would otherwise cost a `users.info` call; admin rights are
 * cached for five minutes so that a demoted admin loses them soon.
 */
import type { Logger } from '../../log.js';
import type { SlackConversation, SlackUser, SlackWebApi } from './web-api.js';

const USER_TTL_MS = 5 * 60_000;
const CONVERSATION_TTL_MS = 60 * 60_000;
const MAX_ENTRIES = 5_000;

/** A map whose entries expire, holding promises so that concurrent look-ups share one call. */
class ExpiringCache<T> {
  private readonly entries = new Map<string, { value: Promise<T>; expiresAt: number }>();

  constructor(private readonly ttlMs: number) {}

  /** The cached value, or the result of `load` (not cached when it fails). */
  get(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    const value = load();
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    value.catch(() => this.entries.delete(key));
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}

/** Users and conversations of the workspace, looked up on demand. */
export class SlackDirectory {
  private readonly users = new ExpiringCache<SlackUser>(USER_TTL_MS);
  private readonly conversations = new ExpiringCache<SlackConversation>(CONVERSATION_TTL_MS);

  constructor(
    private readonly api: SlackWebApi,
    private readonly log: Logger,
  ) {}

  /** The user's display name; the id itself when Slack cannot tell. */
  async userName(userId: string): Promise<string> {
    return (await this.user(userId))?.name ?? userId;
  }

  /** Whether the user is a workspace admin or owner; false when Slack cannot tell. */
  async isAdmin(userId: string): Promise<boolean> {
    return (await this.user(userId))?.isAdmin ?? false;
  }

  /** The conversation's kind and name, or undefined when Slack cannot tell. */
  async conversation(channelId: string): Promise<SlackConversation | undefined> {
    try {
      return await this.conversations.get(channelId, () => this.api.conversationInfo(channelId));
    } catch (error) {
      this.log.debug({ err: error, channel: channelId }, 'slack conversation look-up failed');
      return undefined;
    }
  }

  private async user(userId: string): Promise<SlackUser | undefined> {
    try {
      return await this.users.get(userId, () => this.api.userInfo(userId));
    } catch (error) {
      this.log.debug({ err: error, user: userId }, 'slack user look-up failed');
      return undefined;
    }
  }
}
