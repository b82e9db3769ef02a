/**
 * Who may sign in to the console, and as what: asked when a link is made and
 * again when it is used (a person removed from `admins` in between is
 * refused). The same authority as the chat commands decides: an owner; a
 * configured admin; or an admin, on their platform, of groups the bot has
 * talked in (their scopes).
 */
import { Authority } from '../../chat/authority.js';
import type { Channel } from '../../channels/types.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { platformIdOf } from './as-command.js';
import type { ConversationDirectory } from './directory.js';
import type { LinkHolder } from './sign-in-links.js';
import type { Viewer } from './viewer.js';

/** How many known groups are asked about at sign-in (each may be a platform call). */
const GROUPS_ASKED = 200;

/** Decides a person's standing for the console. */
export class ConsoleAccess {
  private readonly authority: Authority;

  constructor(
    private readonly config: Pick<Config, 'owners' | 'admins'>,
    channelOf: (name: string) => Channel | undefined,
    private readonly directory: ConversationDirectory,
    log: Logger,
  ) {
    this.authority = new Authority(config, channelOf, log);
  }

  /** The viewer `holder` signs in as, or undefined when they may not open the console. */
  async viewerFor(holder: LinkHolder): Promise<Viewer | undefined> {
    const { channel, id } = platformIdOf(holder.userId);
    if (!channel || !id) return undefined;
    const base = { userId: holder.userId, name: holder.name };
    if (this.authority.isOwner(channel, id)) return { ...base, role: 'owner', allGroups: true, scopes: [] };
    const allGroups = this.config.admins.includes(holder.userId);
    const groups = (await this.directory.entries()).filter((entry) => entry.chat.kind === 'group' && entry.chat.channel === channel).slice(0, GROUPS_ASKED);
    const scopes = new Set<string>();
    for (const group of groups) {
      if (scopes.has(group.chat.scope)) continue;
      if (allGroups || (await this.authority.isChatAdmin(group.chat, id))) scopes.add(group.chat.scope);
    }
    if (!allGroups && !scopes.size) return undefined;
    return { ...base, role: 'admin', allGroups, scopes: [...scopes] };
  }

  /**
   * Whether a session's viewer still has the standing it signed in with, as
   * far as the configuration says (sessions outlive a restart with another
   * `owners` or `admins`): checked on every request, without platform calls.
   */
  stillHolds(viewer: Viewer): boolean {
    const { channel, id } = platformIdOf(viewer.userId);
    if (this.authority.isOwner(channel, id)) return true;
    if (viewer.role === 'owner') return false;
    return !viewer.allGroups || this.config.admins.includes(viewer.userId);
  }
}
