/** Claims on Redis, for instances that share a Redis store. */
import type { Redis } from 'ioredis';
import type { Claims } from '../deployment/types.js';

/** Claims with Redis `SET NX PX`, atomic across every instance on the Redis store; Redis drops them when they expire. */
export class RedisClaims implements Claims {
  private client: Redis | undefined;

  constructor(
    private readonly url: string,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  async claim(_owner: string, key: string): Promise<boolean> {
    const client = await this.connect();
    return (await client.set(this.keyOf(key), String(Date.now()), 'PX', this.ttlMs, 'NX')) === 'OK';
  }

  async expiresAt(_owner: string, key: string): Promise<number | undefined> {
    const left = await (await this.connect()).pttl(this.keyOf(key));
    return left > 0 ? Date.now() + left : undefined;
  }

  async forget(): Promise<void> {}

  async close(): Promise<void> {
    this.client?.disconnect();
  }

  private async connect(): Promise<Redis> {
    if (!this.client) {
      const { Redis } = await import('ioredis');
      this.client = new Redis(this.url, { maxRetriesPerRequest: 3 });
    }
    return this.client;
  }

  private keyOf(key: string): string {
    return `pincer:${this.prefix}:${key}`;
  }
}
