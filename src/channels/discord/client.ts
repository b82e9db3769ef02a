/**
 * Builds the discord.js client: the gateway intents and partials the channel
 * needs, mentions that never ping, and the REST base URL from config (the
 * gateway URL is discovered through it with `GET /gateway/bot`).
 */
import { Client, GatewayIntentBits, Partials } from 'discord.js';
import type { Config } from '../../config/schema.js';

/** The `discord` section of the configuration. */
export type DiscordConfig = Config['discord'];

/**
 * Guild metadata (channels, roles, threads), guild and DM messages, and their
 * text. Message Content is privileged: it must be enabled in the Developer Portal.
 */
export const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
] as const;

/** The gateway shards one client runs: `ids` of `count`. */
export interface ShardSet {
  ids: number[];
  count: number;
}

/**
 * Creates a client that is not yet logged in, for the shards `shards`; unset:
 * all of `config.shardCount`, or as many as Discord recommends.
 */
export function createDiscordClient(config: DiscordConfig, shards?: ShardSet): Client {
  const set = shards ?? (config.shardCount ? { ids: Array.from({ length: config.shardCount }, (_, id) => id), count: config.shardCount } : undefined);
  return new Client({
    ...(set ? { shards: set.ids, shardCount: set.count } : {}),
    intents: [...DISCORD_INTENTS],
    // DM channels are never in the cache before their first message arrives;
    // without these partials discord.js drops DMs.
    partials: [Partials.Channel, Partials.Message],
    // Model output must never ping anyone, including the author of the message replied to.
    allowedMentions: { parse: [], repliedUser: false },
    // A nonce with enforce_nonce lets Discord drop the duplicate when a send is
    // retried after a timeout that had in fact succeeded.
    enforceNonce: true,
    rest: config.apiUrl ? { api: config.apiUrl.replace(/\/+$/, '') } : {},
  });
}
