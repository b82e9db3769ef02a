/**
 * What an instance learns over REST before it runs any gateway shard: that the
 * token is good, the application's id (for registering the slash commands) and
 * how many shards Discord recommends for the bot.
 */
import { Routes, type REST, type RESTGetAPIGatewayBotResult, type RESTGetCurrentApplicationResult } from 'discord.js';
import { toChannelError } from './errors.js';

/** The application's id; a refused token fails with a ChannelError that says so. */
export async function applicationIdOf(rest: REST): Promise<string> {
  try {
    return ((await rest.get(Routes.currentApplication())) as RESTGetCurrentApplicationResult).id;
  } catch (error) {
    throw toChannelError(error, 'connect to Discord');
  }
}

/** `configured`, else the count from `GET /gateway/bot`; at least 1. */
export async function shardCountOf(rest: REST, configured: number | undefined): Promise<number> {
  if (configured !== undefined) return configured;
  try {
    const info = (await rest.get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult;
    return Math.max(1, info.shards);
  } catch (error) {
    throw toChannelError(error, 'read the recommended shard count from Discord');
  }
}
