/**
 * Compare-and-set on Redis: `Store.update` made atomic across every instance
 * that shares the store. The record is read, changed in this process, and
 * written by a script only if the stored text is still the one read; otherwise
 * the change runs again on the newer record, after a short random pause (two
 * writers that retry at once would otherwise collide in step, one losing every
 * time). A script, not WATCH/MULTI: WATCH belongs to a connection, and one
 * connection serves many updates at once.
 */
import type { Redis } from 'ioredis';
import { StoreError } from '../errors.js';

/**
 * Sets KEYS[1] to ARGV[3] (or deletes it when ARGV[2] is '1') if it still holds
 * ARGV[1] ('' plus absent), and then each further key KEYS[i] to ARGV[2i] with a
 * time to live of ARGV[2i + 1] ms ('' for none).
 */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if current == false then current = '' end
if current ~= ARGV[1] then return 0 end
for i = 2, #KEYS do
  if ARGV[2 * i + 1] == '' then redis.call('SET', KEYS[i], ARGV[2 * i]) else redis.call('SET', KEYS[i], ARGV[2 * i], 'PX', ARGV[2 * i + 1]) end
end
if ARGV[2] == '1' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[3]) end
return 1`;

/** A record written with an update, in the same script: its Redis key, its keyv value, its time to live. */
export interface AlsoWritten {
  key: string;
  value: unknown;
  ttlMs?: number;
}

/** Retries before an update gives up: only a record changed this often by others gets there. */
const MAX_ATTEMPTS = 100;

/** The pause after losing the race `attempt` times in a row: random, growing, at most 20 ms. */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(20, 2 ** attempt / 4);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Atomic read-change-write of keyv records on Redis. */
export class RedisCompareAndSet {
  constructor(
    private readonly client: Redis,
    private readonly url: string,
  ) {}

  /**
   * Changes the record stored under `key` (keyv's own text form: `{"value": ...}`)
   * with no write of another instance in between. `change` may run several times.
   * The records of `also` are written with it, in the same script.
   */
  async update(key: string, change: (current: unknown) => Promise<unknown>, also: readonly AlsoWritten[] = []): Promise<unknown> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const text = (await this.client.get(key)) ?? '';
      const current = text ? (JSON.parse(text) as { value?: unknown }).value : undefined;
      const next = await change(current);
      // keyv's text form: the value, and when it expires (keyv reads the expiry there).
      const others = also.flatMap(({ value, ttlMs }) => [JSON.stringify(ttlMs === undefined ? { value } : { value, expires: Date.now() + ttlMs }), ttlMs === undefined ? '' : String(ttlMs)]);
      const keys = [key, ...also.map((other) => other.key)];
      const written = await this.client.eval(COMPARE_AND_SET, keys.length, ...keys, text, next === undefined ? '1' : '0', next === undefined ? '' : JSON.stringify({ value: next }), ...others);
      if (written === 1) return next;
      await backoff(attempt);
    }
    throw new StoreError(this.url, `the record ${key} kept changing under ${MAX_ATTEMPTS} attempts to update it`);
  }
}
