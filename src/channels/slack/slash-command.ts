/**
 * The slash command (`/pincer <command> [args]`): every agent command behind
 * one Slack command, since a Slack app declares its commands in its manifest.
 * It becomes an InboundCommand answered through the command's `response_url`.
 */
import type { InboundCommand, Reply } from '../types.js';
import { isAllowed, NOT_AVAILABLE } from './access.js';
import { chatInfoOf, chatKindOf, groupTitle } from './chat.js';
import { mrkdwnParts } from './format.js';
import type { IntakeDeps } from './inbound.js';
import { toChannelError } from './errors.js';

/** The fields of a slash command payload the adapter reads. */
export interface SlashCommandPayload {
  command: string;
  text: string;
  user_id: string;
  user_name?: string;
  channel_id: string;
  channel_name?: string;
  team_id?: string;
}

/** A message sent to a command's `response_url`. */
export interface CommandResponse {
  response_type: 'ephemeral' | 'in_channel';
  text: string;
}

/** Bolt's `respond` for the command. */
export type RespondFn = (message: CommandResponse) => Promise<unknown>;

/** Slack accepts this many messages on one `response_url`. */
const MAX_RESPONSES = 5;

/** What the command intake needs besides the shared intake deps. */
export interface CommandDeps extends IntakeDeps {
  /** The channel thread the bot was last addressed in (commands carry no thread). */
  latestThread(channelId: string): string | undefined;
}

/**
 * The command name and arguments of `/pincer stop now`'s text `stop now`.
 * @example parseCommandText('Policy list') // { name: 'policy', args: 'list' }
 */
export function parseCommandText(text: string): { name: string; args: string } {
  const trimmed = text.trim();
  const space = trimmed.search(/\s/);
  const word = space < 0 ? trimmed : trimmed.slice(0, space);
  const name = word.replace(/^\//, '').toLowerCase() || 'help';
  return { name, args: space < 0 ? '' : trimmed.slice(space).trim() };
}

/** Turns slash command payloads (already acknowledged) into InboundCommands. */
export class SlashCommandIntake {
  constructor(private readonly deps: CommandDeps) {}

  /** Handles one invocation. */
  async handle(payload: SlashCommandPayload, respond: RespondFn): Promise<void> {
    const channelType = payload.channel_name === 'directmessage' ? 'im' : undefined;
    const kind = await chatKindOf(payload.channel_id, channelType, this.deps.directory);
    const origin = { teamId: payload.team_id, channelId: payload.channel_id, userId: payload.user_id, isDm: kind === 'dm' };
    if (!isAllowed(this.deps.config, origin)) {
      this.deps.log.debug({ channel: payload.channel_id, user: payload.user_id }, 'slack: command outside the allowlists refused');
      await this.respond(respond, { text: NOT_AVAILABLE, private: true });
      return;
    }
    const { name, args } = parseCommandText(payload.text);
    const subId = kind === 'group' ? this.deps.latestThread(payload.channel_id) : undefined;
    const title = kind === 'group' ? await groupTitle(payload.channel_id, this.deps.directory) : undefined;
    const command: InboundCommand = {
      type: 'command',
      chat: chatInfoOf({ channelId: payload.channel_id, kind, subId, teamId: payload.team_id, title }),
      sender: { id: payload.user_id, name: await this.senderName(payload) },
      receivedAt: Date.now(),
      name,
      args,
      respond: (reply) => this.respond(respond, reply),
    };
    this.deps.push(command);
  }

  private async senderName(payload: SlashCommandPayload): Promise<string> {
    const name = await this.deps.directory.userName(payload.user_id);
    return name === payload.user_id && payload.user_name ? payload.user_name : name;
  }

  /** Posts the reply on the `response_url`: ephemeral when private, in the channel otherwise. */
  private async respond(respond: RespondFn, reply: Reply): Promise<void> {
    const responseType = reply.private ? 'ephemeral' : 'in_channel';
    const parts = mrkdwnParts(reply.text).slice(0, MAX_RESPONSES);
    try {
      for (const text of parts) await respond({ response_type: responseType, text });
    } catch (error) {
      throw toChannelError(error, 'response_url');
    }
  }
}
