/**
 * Slack's side of the access rule (../access.ts): teams are its workspaces,
 * channels its conversations. DMs are not subject to the channel list; they
 * carry their team, so the team list applies to them too.
 */
import type { Config } from '../../config/schema.js';
import { admits, allowlists, NOT_AVAILABLE, ownerIdsOn, type Allowlists } from '../access.js';
import { SLACK } from './chat.js';

export { NOT_AVAILABLE };

/** The allowlist keys of the `slack` config, and config `owners` (`slack:U01`, ...), which the user list always admits. */
export type SlackAccessConfig = Pick<Config['slack'], 'allowedTeams' | 'allowedUsers' | 'allowedChannels'> & { owners?: readonly string[] };

/** Where an inbound event comes from. */
export interface EventOrigin {
  teamId?: string;
  channelId: string;
  userId: string;
  isDm: boolean;
}

/** The lists in the rule's terms. */
export function slackAllowlists(config: SlackAccessConfig): Allowlists {
  return allowlists({
    users: config.allowedUsers,
    workspaces: config.allowedTeams,
    conversations: config.allowedChannels,
    owners: ownerIdsOn(config.owners ?? [], SLACK),
  });
}

/** Whether the configured allowlists admit an event from `origin`. */
export function isAllowed(config: SlackAccessConfig, origin: EventOrigin): boolean {
  const request = { kind: origin.isDm ? 'dm' : 'group', userId: origin.userId, workspaceId: origin.teamId, conversationId: origin.channelId } as const;
  return admits(slackAllowlists(config), request);
}
