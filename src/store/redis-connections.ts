/**
 * The connections one instance holds to its Redis store, shared by everything
 * that talks to Redis: one command connection (the store's records, leases,
 * rate limits, claims, the BullMQ queues and their workers' ordinary commands)
 * and one subscriber for pub/sub. The only other connections are the ones a
 * connection cannot share by nature: each BullMQ worker waits for its next job
 * with a blocking command, which holds a connection of its own (BullMQ
 * duplicates the command connection for it).
 */
import type { Redis, RedisOptions } from 'ioredis';
import { silentLogger, type Logger } from '../log.js';
import { withoutPassword } from './url.js';

/** Retries of one command while the server is away, before the command fails (ioredis's `maxRetriesPerRequest`). */
export const COMMAND_RETRIES = 3;

/** How long a closing connection waits for the server to end it, before it is cut. */
const CLOSE_WAIT_MS = 200;

/** Called with each message of a channel. */
export type ChannelListener = (text: string) => void;

/** One instance's connections to the Redis store at `url`. */
export class RedisConnections {
  private listening: Redis | undefined;
  private readonly channels = new Map<string, Set<ChannelListener>>();
  private closed = false;

  private constructor(
    readonly url: string,
    /** Commands and scripts, for every user at once (ioredis pipelines them); never a blocking or subscribing command. */
    readonly command: Redis,
    private readonly log: Logger,
  ) {}

  /** Makes the command connection (it connects in the background; see {@link ready}). */
  static async open(url: string, log: Logger = silentLogger): Promise<RedisConnections> {
    const { Redis } = await import('ioredis');
    /** Its duplicates block (BullMQ's workers) or listen: they wait for the server instead of failing a command. */
    class CommandConnection extends Redis {
      override duplicate(override?: Partial<RedisOptions>): Redis {
        return super.duplicate({ ...override, maxRetriesPerRequest: null });
      }
    }
    // A server that never answers would hold a closing connection open for ioredis's default 2 s (and the process with it).
    const command = new CommandConnection(url, { maxRetriesPerRequest: COMMAND_RETRIES, connectionName: 'pincer', disconnectTimeout: CLOSE_WAIT_MS });
    const connections = new RedisConnections(url, command, log);
    connections.reportErrors(command, 'commands');
    return connections;
  }

  /**
   * Resolves once the command connection is ready (the server answered its
   * ready check). It keeps trying meanwhile, however often the server refuses:
   * how long to wait is the caller's bound (store/connect.ts).
   */
  ready(): Promise<void> {
    const command = this.command;
    if (command.status === 'ready') return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        command.off('ready', onReady);
        command.off('end', onEnd);
        if (error) reject(error);
        else resolve();
      };
      const onReady = () => settle();
      const onEnd = () => settle(new Error('the connection to Redis was closed'));
      command.on('ready', onReady);
      command.on('end', onEnd);
    });
  }

  /** Calls `listener` with every message published on `channel`; resolves once subscribed, with how to stop. */
  async subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    const listening = this.subscriber();
    let listeners = this.channels.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.channels.set(channel, listeners);
      await listening.subscribe(channel);
    }
    listeners.add(listener);
    return async () => {
      listeners.delete(listener);
      if (listeners.size || this.channels.get(channel) !== listeners) return;
      this.channels.delete(channel);
      if (!this.closed) await listening.unsubscribe(channel);
    };
  }

  /** Disconnects every connection; calling it again does nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listening?.disconnect();
    this.command.disconnect();
  }

  /** The one subscriber, made when first needed. */
  private subscriber(): Redis {
    if (!this.listening) {
      this.listening = this.command.duplicate({ connectionName: 'pincer:bus' });
      this.reportErrors(this.listening, 'pub/sub');
      this.listening.on('message', (channel: string, text: string) => {
        for (const listener of this.channels.get(channel) ?? []) listener(text);
      });
    }
    return this.listening;
  }

  /** Logs the first error of each outage (ioredis retries on its own, and would print every one unheard). */
  private reportErrors(connection: Redis, role: string): void {
    let reported = false;
    connection.on('error', (error: unknown) => {
      if (reported || this.closed) return;
      reported = true;
      this.log.warn({ err: error, role, url: withoutPassword(this.url) }, 'Redis connection lost; reconnecting');
    });
    connection.on('ready', () => (reported = false));
  }
}
