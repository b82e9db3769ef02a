/**
 * Telegram group admins (creator or administrator, via getChatMember), with a
 * short cache because admin commands may ask several times in a row.
 */
import type { Api } from 'grammy';
import type { Logger } from '../../log.js';
import type { ChatInfo } from '../types.js';
import { describeError } from './errors.js';

const ADMIN_STATUSES = new Set(['creator', 'administrator']);
const GONE_STATUSES = new Set(['left', 'kicked']);

/** Answers "is this user an admin of this group?" */
export class AdminCache {
  private readonly entries = new Map<string, { admin: boolean; until: number }>();

  constructor(
    private readonly api: Api,
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * False when the person left or was removed from the group. When Telegram
   * cannot tell, true: a passing outage must not end someone's background work.
   */
  async isMember(chat: ChatInfo, userId: string): Promise<boolean> {
    try {
      const member = await this.api.getChatMember(chat.chatId, Number(userId));
      return !GONE_STATUSES.has(member.status);
    } catch (error) {
      this.log.warn({ error: describeError(error), chatId: chat.chatId }, 'telegram: getChatMember failed; membership not checked');
      return true;
    }
  }

  /** True for a group's creator or administrators; false in DMs and when Telegram cannot tell (fails closed). */
  async isAdmin(chat: ChatInfo, userId: string, now = Date.now()): Promise<boolean> {
    if (chat.kind === 'dm') return false;
    const key = `${chat.chatId}:${userId}`;
    const cached = this.entries.get(key);
    if (cached && cached.until > now) return cached.admin;
    try {
      const member = await this.api.getChatMember(chat.chatId, Number(userId));
      const admin = ADMIN_STATUSES.has(member.status);
      this.entries.set(key, { admin, until: now + this.ttlMs });
      return admin;
    } catch (error) {
      this.log.warn({ error: describeError(error), chatId: chat.chatId }, 'telegram: getChatMember failed');
      return false;
    }
  }
}
