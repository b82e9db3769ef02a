/**
 * This instance's place among the instances that share one Redis store
 * (SPEC section 15): its name, its connections, the leases it holds and the
 * messages the instances send each other.
 *
 * A lease is a Redis key holding `instance#token` with a TTL; the token comes
 * from a counter per lease that only grows, so a write carrying the token of a
 * lease that lapsed and was taken again (a fencing token) is told apart from the
 * holder's and refused.
 */
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { RedisConnections } from '../store/redis-connections.js';

/** Every key of the cluster starts with this. */
export const CLUSTER_PREFIX = 'pincer:cluster:';

/** The current time in milliseconds, on Redis's clock (a Lua fragment). */
export const REDIS_NOW_MS = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)`;

/** The pub/sub channel the instances talk on. */
const BUS = `${CLUSTER_PREFIX}bus`;

/** Messages between instances. */
export type ClusterMessage =
  /** A thread's inbox has new entries: its lease holder reads them. */
  | { type: 'poke'; thread: string }
  /** Policy or permissions changed: drop what was cached. */
  | { type: 'settings' }
  /** `/stop` for a thread: its lease holder stops it. */
  | { type: 'stop'; thread: string; by: string }
  /** A job's owner wrote to it: the instance running it reads its mailbox at the next step. */
  | { type: 'mail'; id: string };

/** Takes KEYS[1] (the lease) when free: the next token of KEYS[2], held by ARGV[1] for ARGV[2] ms. */
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
return token`;

/** Extends the lease when ARGV[1] still holds it. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Gives the lease up when ARGV[1] still holds it. */
const RESIGN = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/** This instance's name: configured, else host name and pid. */
export function instanceIdOf(configured: string | undefined): string {
  return configured ?? `${hostname()}-${process.pid}`;
}

/** A lease this instance holds: `instance#token`. */
export interface HeldLease {
  name: string;
  holder: string;
}

/** This instance's connections and leases on the shared Redis. */
export class ClusterNode {
  private readonly listeners = new Set<(message: ClusterMessage) => void>();
  private stopListening: (() => Promise<void>) | undefined;
  private closed = false;

  private constructor(
    readonly instanceId: string,
    readonly leaseTtlMs: number,
    /** The instance's connections to the store (shared with the store, timers and queues). */
    readonly connections: RedisConnections,
    private readonly owned: boolean,
    private readonly log: Logger,
  ) {}

  /**
   * Joins the instances and starts listening to them, on the instance's
   * `connections` (left open by {@link close}); without them, on connections
   * of its own to `url`, closed by {@link close}.
   */
  static async connect(url: string, instanceId: string, leaseTtlMs: number, log: Logger, connections?: RedisConnections): Promise<ClusterNode> {
    const node = new ClusterNode(instanceId, leaseTtlMs, connections ?? (await RedisConnections.open(url, log)), !connections, log);
    node.stopListening = await node.connections.subscribe(BUS, (text) => node.deliver(text));
    log.info({ instance: instanceId, leaseTtlMs }, 'joined the instances on the Redis store');
    return node;
  }

  /** Commands and scripts: the instance's command connection. */
  get redis(): Redis {
    return this.connections.command;
  }

  /** Sends a message to every instance (this one included). */
  async publish(message: ClusterMessage): Promise<void> {
    await this.redis.publish(BUS, JSON.stringify(message));
  }

  /** Calls `listener` with every message of the instances; returns how to stop. */
  onMessage(listener: (message: ClusterMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes the lease `name` if no instance holds it; undefined when one does. */
  async acquire(name: string, ttlMs = this.leaseTtlMs): Promise<HeldLease | undefined> {
    const token = (await this.redis.eval(ACQUIRE, 2, this.leaseKey(name), `${CLUSTER_PREFIX}fence:${name}`, this.instanceId, ttlMs)) as number | null;
    return token === null ? undefined : { name, holder: `${this.instanceId}#${token}` };
  }

  /** Extends a held lease; false when it was lost (it lapsed, and may be another's now). */
  async renew(lease: HeldLease, ttlMs = this.leaseTtlMs): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.leaseKey(lease.name), lease.holder, ttlMs)) === 1;
  }

  /** Gives a held lease up at once (another instance need not wait for the TTL). */
  async resign(lease: HeldLease): Promise<void> {
    await this.redis.eval(RESIGN, 1, this.leaseKey(lease.name), lease.holder);
  }

  /** The Redis key of lease `name`. */
  leaseKey(name: string): string {
    return `${CLUSTER_PREFIX}lease:${name}`;
  }

  /** Stops listening; disconnects the connections it made itself. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    if (this.owned) this.connections.close();
    else void this.stopListening?.().catch(() => undefined);
  }

  private deliver(text: string): void {
    let message: ClusterMessage;
    try {
      message = JSON.parse(text) as ClusterMessage;
    } catch {
      this.log.warn('cluster: a message that is not JSON was ignored');
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (error) {
        this.log.error({ err: error, type: message.type }, 'cluster: a message was not handled');
      }
    }
  }
}
