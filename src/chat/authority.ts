/**
 * Who someone is to the bot, decided in one place: an owner (config `owners`,
 * or the person at a local terminal, which the channel declares), an admin
 * (config `admins`, or an admin of the group on the platform) or a member.
 * Commands, policy changes and later jobs and routines ask here.
 */
import type { CommandRole } from '../channels/command-grammar.js';
import type { Channel, ChatInfo } from '../channels/types.js';
import { qualifiedUserId } from '../channels/types.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';

/** A person's standing with the bot. */
export type Role = 'owner' | 'admin' | 'member';

/** Decides roles; see the module comment. */
export class Authority {
  constructor(
    private readonly config: Pick<Config, 'owners' | 'admins'>,
    private readonly channel: (name: string) => Channel | undefined,
    private readonly log: Logger,
  ) {}

  /** Whether the sender owns the bot: listed in `owners`, or at a channel whose one user runs the process. */
  isOwner(channel: string, userId: string): boolean {
    if (this.channel(channel)?.capabilities.localOperator) return true;
    return this.config.owners.includes(qualifiedUserId(channel, userId));
  }

  /** Whether the sender administers the bot as a whole: an owner or a configured admin. */
  isBotAdmin(channel: string, userId: string): boolean {
    return this.isOwner(channel, userId) || this.config.admins.includes(qualifiedUserId(channel, userId));
  }

  /** Whether the sender may administer this chat: a bot admin, or an admin of the group on its platform. */
  async isChatAdmin(chat: ChatInfo, userId: string): Promise<boolean> {
    if (this.isBotAdmin(chat.channel, userId)) return true;
    const channel = this.channel(chat.channel);
    if (!channel?.isAdmin || chat.kind !== 'group') return false;
    try {
      return await channel.isAdmin(chat, userId);
    } catch (error) {
      this.log.warn({ err: error }, 'admin check failed');
      return false;
    }
  }

  /**
   * Whether the sender may run a command meant for `who`: `admin` means an
   * admin of this chat (in a DM, of the bot), `owner` an owner of the bot.
   */
  async allows(who: CommandRole, chat: ChatInfo, userId: string): Promise<boolean> {
    if (who === 'owner') return this.isOwner(chat.channel, userId);
    if (who === 'admin') return this.isChatAdmin(chat, userId);
    return true;
  }

  /** The sender's role in `chat`. */
  async roleOf(chat: ChatInfo, userId: string): Promise<Role> {
    if (this.isOwner(chat.channel, userId)) return 'owner';
    return (await this.isChatAdmin(chat, userId)) ? 'admin' : 'member';
  }
}
