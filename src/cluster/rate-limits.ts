/**
 * Rate limits counted in Redis, so that they hold for the bot as a whole and
 * not per instance. Times are Redis's own clock (TIME), so instances whose
 * clocks differ count alike. Each key is a sorted set of call times, pruned to
 * the longest window and expiring with it.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { SharedBudget } from '../channels/types.js';
import type { RateLimiter, RateLimitOutcome } from '../tools/stages/rate-limit.js';
import type { ToolRateLimit } from '../tools/types.js';
import { CLUSTER_PREFIX, REDIS_NOW_MS } from './node.js';

/**
 * Records a call in KEYS[1] (ARGV[1] its member) unless the calls of the last
 * minute reach ARGV[2] or those of the last hour ARGV[3] (0: no such limit).
 * Returns {1} or {0, wait ms, limit, window}.
 */
const TAKE = `${REDIS_NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 3600000)
local function refusal(limit, window, name)
  if limit <= 0 then return nil end
  local recent = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES')
  local count = #recent / 2
  if count < limit then return nil end
  local oldest = tonumber(recent[(count - limit) * 2 + 2])
  return {0, math.max(0, oldest + window - now), limit, name}
end
local refused = refusal(tonumber(ARGV[2]), 60000, 'minute') or refusal(tonumber(ARGV[3]), 3600000, 'hour')
if refused then return refused end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], 3600000)
return {1}`;

/** Per-user, per-tool limits shared by every instance on the Redis. */
export class RedisRateLimiter implements RateLimiter {
  constructor(private readonly redis: Redis) {}

  async take(key: string, limit: ToolRateLimit): Promise<RateLimitOutcome> {
    const reply = (await this.redis.eval(TAKE, 1, `${CLUSTER_PREFIX}rate:tool:${key}`, randomUUID(), limit.perMinute ?? 0, limit.perHour ?? 0)) as [number, number?, number?, string?];
    if (reply[0] === 1) return { ok: true };
    return { ok: false, retryAfterMs: Number(reply[1]), limit: Number(reply[2]), window: reply[3] === 'hour' ? 'hour' : 'minute' };
  }
}

/**
 * Books a start time in KEYS[1] (the last ARGV[1] starts, ascending): now, or
 * ARGV[2] ms after the ARGV[1]-th latest start when that many are booked.
 * Returns the wait in ms.
 */
const RESERVE = `${REDIS_NOW_MS}
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local start = now
if redis.call('LLEN', KEYS[1]) >= limit then
  start = math.max(now, tonumber(redis.call('LINDEX', KEYS[1], -limit)) + period)
end
redis.call('RPUSH', KEYS[1], start)
redis.call('LTRIM', KEYS[1], -limit, -1)
redis.call('PEXPIRE', KEYS[1], start - now + period)
return start - now`;

/** A platform limit counted for every instance at once (Telegram's messages a second over all chats). */
export class RedisSharedBudget implements SharedBudget {
  constructor(private readonly redis: Redis) {}

  async reserve(key: string, limit: number, periodMs: number): Promise<number> {
    return Number(await this.redis.eval(RESERVE, 1, `${CLUSTER_PREFIX}budget:${key}`, limit, periodMs));
  }
}
