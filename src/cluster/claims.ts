/** Claims on Redis, for instances that share a Redis store. */
import type { Redis } from 'ioredis';
import type { Claims } from '../deployment/types.js';

/** Claims with Redis `SET NX PX`, atomic across every instance on the Redis store; Redis drops them when they expire. */
export class RedisClaims implements Claims {
  constructor(
    /** The instance's command connection (its owner closes it). */
    private readonly client: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  async claim(_owner: string, key: string): Promise<boolean> {
    return (await this.client.set(this.keyOf(key), String(Date.now()), 'PX', this.ttlMs, 'NX')) === 'OK';
  }

  async expiresAt(_owner: string, key: string): Promise<number | undefined> {
    const left = await this.client.pttl(this.keyOf(key));
    return left > 0 ? Date.now() + left : undefined;
  }

  async forget(): Promise<void> {}

  async close(): Promise<void> {}

  private keyOf(key: string): string {
    return `pincer:${this.prefix}:${key}`;
  }
}
