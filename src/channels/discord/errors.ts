/**
 * Turns what discord.js throws into a ChannelError that says what failed and
 * whether trying again may help. @discordjs/rest has already waited out 429s
 * and retried 5xx and network errors by the time an error reaches here.
 */
import { DiscordAPIError, HTTPError } from 'discord.js';
import { ChannelError } from '../../errors.js';

/** Discord's code for an interaction whose token expired or was already answered. */
export const UNKNOWN_INTERACTION = 10062;

/** A ChannelError for a failed `action` (e.g. `send to 123`). */
export function toChannelError(error: unknown, action: string): ChannelError {
  if (error instanceof ChannelError) return error;
  if ((error as { code?: unknown } | undefined)?.code === 'TokenInvalid' || statusOf(error) === 401) {
    return new ChannelError('discord', `${action} failed: the bot token was rejected; check DISCORD_BOT_TOKEN`, false, { cause: error });
  }
  const status = statusOf(error);
  const detail = error instanceof Error ? error.message : String(error);
  const retryable = status === undefined || status === 429 || status >= 500;
  return new ChannelError('discord', `${action} failed: ${detail}`, retryable, { cause: error });
}

/** Discord's JSON error code (e.g. 10008 unknown message), when the API returned one. */
export function apiCodeOf(error: unknown): number | string | undefined {
  return error instanceof DiscordAPIError ? error.code : undefined;
}

function statusOf(error: unknown): number | undefined {
  if (error instanceof DiscordAPIError || error instanceof HTTPError) return error.status;
  return undefined;
}
