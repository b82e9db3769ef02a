/**
 * keyv's storage on Redis over the instance's shared ioredis connection
 * (`@keyv/redis` speaks through a client of its own, of another library, so
 * it would hold a connection more). The layout is `@keyv/redis`'s: a record of
 * namespace `ns` and key `k` is the string at `ns::k`, its TTL Redis's own;
 * what an instance wrote before reads the same.
 *
 * As `@keyv/redis` does by default, a failed command is reported as an
 * `error` event and reads as absent (keyv passes the event on to the store's log).
 */
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

/** Between a record's namespace and its key. */
const SEPARATOR = '::';

/** How many keys `clear` asks for at a time. */
const SCAN_COUNT = 500;

/** The Redis key of `key` in `namespace`. */
export function redisKeyOf(namespace: string | undefined, key: string): string {
  return namespace ? `${namespace}${SEPARATOR}${key}` : key;
}

/** A keyv store adapter on an ioredis connection it borrows (it never closes it). */
export class RedisKeyvStore extends EventEmitter {
  /** Set by keyv: the prefix of every key. */
  namespace: string | undefined;
  readonly opts = { dialect: 'redis' };

  constructor(private readonly client: Redis) {
    super();
  }

  async get(key: string): Promise<string | undefined> {
    return this.attempt(async () => (await this.client.get(redisKeyOf(this.namespace, key))) ?? undefined, undefined);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    const redisKey = redisKeyOf(this.namespace, key);
    await this.attempt(async () => void (ttlMs ? await this.client.set(redisKey, value, 'PX', ttlMs) : await this.client.set(redisKey, value)), undefined);
  }

  /** Writes every entry in one transaction (MULTI/EXEC): all of them land or none does. */
  async setMany(entries: { key: string; value: string; ttl?: number }[]): Promise<void> {
    const transaction = this.client.multi();
    for (const { key, value, ttl } of entries) {
      const redisKey = redisKeyOf(this.namespace, key);
      if (ttl) transaction.set(redisKey, value, 'PX', ttl);
      else transaction.set(redisKey, value);
    }
    await this.attempt(async () => {
      const failed = (await transaction.exec())?.find(([error]) => error)?.[0];
      if (failed) throw failed;
    }, undefined);
  }

  async delete(key: string): Promise<boolean> {
    return this.attempt(async () => (await this.client.unlink(redisKeyOf(this.namespace, key))) > 0, false);
  }

  async has(key: string): Promise<boolean> {
    return this.attempt(async () => (await this.client.exists(redisKeyOf(this.namespace, key))) > 0, false);
  }

  /** Drops every record of the namespace (of every namespace when there is none). */
  async clear(): Promise<void> {
    const pattern = `${redisKeyOf(this.namespace, '')}*`;
    await this.attempt(async () => {
      let cursor = '0';
      do {
        const [next, keys] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
        if (keys.length) await this.client.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    }, undefined);
  }

  /** The connection is the instance's: closing the store leaves it open. */
  async disconnect(): Promise<void> {}

  private async attempt<T>(work: () => Promise<T>, failed: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      this.emit('error', error);
      return failed;
    }
  }
}
