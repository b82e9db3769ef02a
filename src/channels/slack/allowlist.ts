/**
 * Who may use the bot on Slack. Each list, when not empty, admits only its
 * ids; an empty list admits everyone. The channel list applies to channels,
 * not to DMs, which the user list governs.
 */
import type { Config } from '../../config/schema.js';

/** What a command or button press from outside the allowlists is told (messages are ignored silently). */
export const NOT_AVAILABLE = 'pincer is not available to you here.';

/** Where an inbound event comes from. */
export interface EventOrigin {
  teamId?: string;
  channelId: string;
  userId: string;
  isDm: boolean;
}

/** Whether the configured allowlists admit an event from `origin`. */
export function isAllowed(config: Config['slack'], origin: EventOrigin): boolean {
  if (!admits(config.allowedTeams, origin.teamId)) return false;
  if (!admits(config.allowedUsers, origin.userId)) return false;
  return origin.isDm || admits(config.allowedChannels, origin.channelId);
}

function admits(list: string[], id: string | undefined): boolean {
  return list.length === 0 || (id !== undefined && list.includes(id));
}
