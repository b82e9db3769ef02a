/**
 * The daily cost limit booked in Redis, so that it holds for a person across
 * every instance at once (SPEC section 15: cost ceilings are global). Each
 * person's day is one hash: `spent` (the real cost of their settled calls) and
 * one `booking:<id>` field per running call (`<usd>|<expiry ms>`). The check and
 * the booking are one script; times are Redis's own clock, so instances whose
 * clocks differ agree on when a booking lapses.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CostBooking, CostBudget } from '../engine/budget.js';
import { dayOf, type UsageLedger } from '../engine/usage.js';
import { CLUSTER_PREFIX, REDIS_NOW_MS } from './node.js';

/** How long a day's hash is kept after its last change: past the day, for calls that end after midnight. */
const KEEP_MS = 2 * 24 * 3_600_000;

/**
 * Books ARGV[2] dollars as booking ARGV[1] in KEYS[1], lapsing ARGV[4] ms from
 * now, if spent plus the bookings that have not lapsed is under ARGV[3]
 * (lapsed ones are removed). A day without `spent` yet takes ARGV[5] as what was
 * spent before, or answers {-1} when ARGV[5] is empty. Returns {1} when booked,
 * {0} when refused.
 */
const BOOK = `${REDIS_NOW_MS}
if redis.call('HEXISTS', KEYS[1], 'spent') == 0 then
  if ARGV[5] == '' then return {-1} end
  redis.call('HSET', KEYS[1], 'spent', ARGV[5])
end
local spent, booked = 0, 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if fields[i] == 'spent' then
    spent = tonumber(fields[i + 1])
  else
    local usd, lapses = string.match(fields[i + 1], '^([^|]+)|(.+)$')
    if tonumber(lapses) <= now then redis.call('HDEL', KEYS[1], fields[i]) else booked = booked + tonumber(usd) end
  end
end
if spent + booked >= tonumber(ARGV[3]) then return {0} end
redis.call('HSET', KEYS[1], 'booking:' .. ARGV[1], ARGV[2] .. '|' .. (now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[1], ${KEEP_MS})
return {1}`;

/** Ends booking ARGV[1] of KEYS[1] and adds ARGV[2] dollars to what was spent. */
const SETTLE = `
redis.call('HDEL', KEYS[1], 'booking:' .. ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ${KEEP_MS})
return 1`;

/** Dollars as Redis takes them: plain decimals, never exponent notation. */
function dollars(usd: number): string {
  return usd.toFixed(12);
}

/**
 * Every instance's bookings and settled costs in one place. A person's first
 * booking of the day starts from what the usage ledger holds for them (calls
 * made before this budget kept their day, as right after an upgrade).
 */
export class RedisCostBudget implements CostBudget {
  constructor(
    private readonly redis: Redis,
    private readonly usage: UsageLedger,
    private readonly limitUsd: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async book(userId: string, estimateUsd: number): Promise<CostBooking | undefined> {
    const key = `${CLUSTER_PREFIX}cost:${userId}:${dayOf(this.now())}`;
    const id = randomUUID();
    const attempt = async (spentBefore: string) =>
      Number(((await this.redis.eval(BOOK, 1, key, id, dollars(estimateUsd), dollars(this.limitUsd), this.ttlMs, spentBefore)) as number[])[0]);
    let outcome = await attempt('');
    if (outcome === -1) outcome = await attempt(dollars((await this.usage.userToday(userId)).costUsd));
    return outcome === 1 ? { userId, key, id, usd: estimateUsd } : undefined;
  }

  async settle(booking: CostBooking, costUsd: number): Promise<void> {
    await this.redis.eval(SETTLE, 1, booking.key, booking.id, dollars(costUsd));
  }

  async release(booking: CostBooking): Promise<void> {
    await this.redis.eval(SETTLE, 1, booking.key, booking.id, '0');
  }
}
