/**
 * Which instances are alive, so that duties that come in numbers (Discord's
 * shards) can be shared out evenly. The instances are counted by channel: an
 * instance that does not run Discord takes no share of its shards. Each
 * instance keeps its entry in the channel's sorted set fresh, scored with the time it counts as alive until (now plus
 * the lease TTL, on Redis's clock so that the instances' clocks need not
 * agree); an instance that dies drops out once its score is past.
 */
import type { Logger } from '../log.js';
import { CLUSTER_PREFIX, REDIS_NOW_MS, type ClusterNode } from './node.js';

/** The sorted set of the live instances that run `channel`: member the instance id, score alive-until in ms. */
export function membersKey(channel: string): string {
  return `${CLUSTER_PREFIX}members:${channel}`;
}

/** Scores ARGV[1] alive until Redis's now plus ARGV[2] ms, and drops the entries that lapsed. */
const REFRESH = `${REDIS_NOW_MS}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return 1`;

/** Counts the entries still alive by Redis's clock. */
const COUNT = `${REDIS_NOW_MS}
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`;

/** The entries still alive by Redis's clock. */
const LIST = `${REDIS_NOW_MS}
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')`;

/** A live instance and the channels it runs (the console's overview). */
export interface LiveInstance {
  id: string;
  channels: string[];
}

/**
 * Every live instance on the store, with the channels each runs, read from
 * every channel's list of members (an instance that runs no channel is not
 * in any list).
 */
export async function liveInstances(node: ClusterNode): Promise<LiveInstance[]> {
  const prefix = membersKey('');
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await node.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 100);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const byId = new Map<string, string[]>();
  for (const key of [...new Set(keys)].sort()) {
    for (const id of (await node.redis.eval(LIST, 1, key)) as string[]) byId.set(id, [...(byId.get(id) ?? []), key.slice(prefix.length)]);
  }
  return [...byId].sort(([a], [b]) => a.localeCompare(b)).map(([id, channels]) => ({ id, channels }));
}

/** This instance's entry among the live instances that run a channel, refreshed every third of the lease TTL. */
export class ClusterMembers {
  private timer: NodeJS.Timeout | undefined;
  private readonly key: string;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
    channel: string,
  ) {
    this.key = membersKey(channel);
  }

  /** Enters this instance and keeps its entry fresh until {@link leave}. */
  async join(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) => this.log.warn({ err: error }, 'cluster: this instance could not say it is alive; trying again'));
    }, Math.max(100, Math.floor(this.node.leaseTtlMs / 3)));
    this.timer.unref();
  }

  /** How many instances are alive, this one included (at least 1). */
  async count(): Promise<number> {
    const alive = (await this.node.redis.eval(COUNT, 1, this.key)) as number;
    return Math.max(1, alive);
  }

  /** Takes this instance's entry out at once, so that the others need not wait for it to lapse. */
  async leave(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.node.redis.zrem(this.key, this.node.instanceId).catch((error: unknown) => {
      this.log.warn({ err: error }, 'cluster: this instance could not leave the list of live instances; its entry lapses');
    });
  }

  private async refresh(): Promise<void> {
    await this.node.redis.eval(REFRESH, 1, this.key, this.node.instanceId, this.node.leaseTtlMs);
  }
}
