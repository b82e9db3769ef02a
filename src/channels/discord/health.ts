/**
 * Whether the gateway connection is up, from what discord.js tracks per shard.
 * discord.js is its own watchdog: a heartbeat that Discord has not acknowledged
 * by the next beat closes the socket as a zombie and resumes, so a shard that
 * stopped receiving shows as reconnecting or resuming until it is back.
 */
import { Status, type Client } from 'discord.js';
import type { ChannelHealth } from '../types.js';

/** How a shard's status reads in a reason. */
const STATUS_WORDS: Record<Status, string> = {
  [Status.Ready]: 'ready',
  [Status.Connecting]: 'connecting',
  [Status.Reconnecting]: 'reconnecting',
  [Status.Idle]: 'not connected',
  [Status.Nearly]: 'nearly ready',
  [Status.Disconnected]: 'closed for good',
  [Status.WaitingForGuilds]: 'waiting for guilds',
  [Status.Identifying]: 'identifying',
  [Status.Resuming]: 'resuming',
};

/**
 * Ready when each shard this instance holds (`clients`, by shard id) is ready;
 * else which are not. Holding none is standing by: ready.
 */
export function heldShardsHealth(clients: ReadonlyMap<number, Client>): ChannelHealth {
  const states: string[] = [];
  for (const [id, client] of clients) {
    const shard = client.ws.shards.get(id);
    if (!shard) states.push(`shard ${id} connecting`);
    else if (shard.status !== Status.Ready) states.push(`shard ${id} ${STATUS_WORDS[shard.status]}`);
  }
  return states.length ? { ready: false, reason: `discord: gateway ${states.join(', ')}` } : { ready: true };
}

/** Ready when every shard is ready; else which shards are not, and what they are doing. */
export function gatewayHealth(client: Client): ChannelHealth {
  const shards = [...client.ws.shards.values()];
  if (!shards.length) return { ready: false, reason: 'discord: not connected to the gateway' };
  const down = shards.filter((shard) => shard.status !== Status.Ready);
  if (!down.length) return { ready: true };
  const states = down.map((shard) => `shard ${shard.id} ${STATUS_WORDS[shard.status]}`);
  return { ready: false, reason: `discord: gateway ${states.join(', ')}` };
}
