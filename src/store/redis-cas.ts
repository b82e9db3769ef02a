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

/** Sets KEYS[1] to ARGV[3] (or deletes it when ARGV[2] is '1') if it still holds ARGV[1] ('' plus absent). */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if current == false then current = '' end
if current ~= ARGV[1] then return 0 end
if ARGV[2] == '1' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[3]) end
return 1`;

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
   */
  async update(key: string, change: (current: unknown) => Promise<unknown>): Promise<unknown> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const text = (await this.client.get(key)) ?? '';
      const current = text ? (JSON.parse(text) as { value?: unknown }).value : undefined;
      const next = await change(current);
      const written = await this.client.eval(COMPARE_AND_SET, 1, key, text, next === undefined ? '1' : '0', next === undefined ? '' : JSON.stringify({ value: next }));
      if (written === 1) return next;
      await backoff(attempt);
    }
    throw new StoreError(this.url, `the record ${key} kept changing under ${MAX_ATTEMPTS} attempts to update it`);
  }
}
