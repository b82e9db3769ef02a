/**
 * A sender's rate counted in Redis, for the bot as a whole: the messages a
 * shared inbox takes in (counted by its intake script) and the commands and
 * oversized messages that get a reply (counted here) go into one sorted set
 * per sender, so a burst spread over the instances meets one limit.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RATE_NOTICE_EVERY_MS, RATE_WINDOW_MS, rateRefusal, type RateRefusal, type SenderRate } from '../engine/inbound-limits.js';
import { CLUSTER_PREFIX, REDIS_NOW_MS } from './node.js';

/**
 * Lua: `count_sender(rate, told, limit, window, every, member)` adds `member`
 * to the sorted set `rate` (times of the last `window` ms) unless it holds
 * `limit` already (0: no limit). Returns nil when counted, or {-1, wait ms,
 * 1 when the sender is to be told (`told` marks that for `every` ms)}.
 */
export const COUNT_SENDER = `
local function count_sender(rate, told, limit, window, every, member)
  if limit <= 0 then return nil end
  ${REDIS_NOW_MS}
  redis.call('ZREMRANGEBYSCORE', rate, '-inf', now - window)
  if redis.call('ZCARD', rate) >= limit then
    local oldest = tonumber(redis.call('ZRANGE', rate, 0, 0, 'WITHSCORES')[2])
    local tell = redis.call('SET', told, '1', 'NX', 'PX', every) and 1 or 0
    return {-1, oldest + window - now, tell}
  end
  redis.call('ZADD', rate, now, member)
  redis.call('PEXPIRE', rate, window)
  return nil
end`;

/** Counts one event of a sender (KEYS[1], KEYS[2]) as ARGV[4]; ARGV[1..3] the limit, window and notice period. */
const TAKE = `${COUNT_SENDER}
return count_sender(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]) or {1}`;

/** The keys of a sender's rate: the times counted, and the mark that they were told. */
export function senderRateKeys(userId: string): [rate: string, told: string] {
  const rate = `${CLUSTER_PREFIX}rate:in:${userId}`;
  return [rate, `${rate}:told`];
}

/** {@link SenderRate} shared by every instance on the Redis. */
export class RedisSenderRate implements SenderRate {
  constructor(
    private readonly redis: Redis,
    private readonly perMinute: number,
  ) {}

  async take(userId: string): Promise<RateRefusal | undefined> {
    const keys = senderRateKeys(userId);
    const [outcome, wait, tell] = (await this.redis.eval(TAKE, 2, ...keys, this.perMinute, RATE_WINDOW_MS, RATE_NOTICE_EVERY_MS, `reply:${randomUUID()}`)) as [number, number?, number?];
    if (outcome === 1) return undefined;
    return { refusal: rateRefusal(this.perMinute, Number(wait)), notify: tell === 1 };
  }
}
