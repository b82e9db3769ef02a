/**
 * Timers that fire at a time: in this process, or as BullMQ delayed jobs when
 * the store is Redis, so that what one instance armed fires even after that
 * instance is gone (on whichever instance is up). A timer is named by an id and
 * a time; arming the same pair twice fires it once on BullMQ (the pair is the
 * job id), so every instance may re-arm what it finds waiting at start.
 * Firing may still happen more than once (a retried job, two processes that
 * armed it in memory): the work it starts must claim its effect atomically.
 */
import type { Queue, Worker } from 'bullmq';
import type { Logger } from '../log.js';
import type { RedisConnections } from './redis-connections.js';

/** Called when a timer fires, with the id and the time it was armed for. */
export type FireTimer = (id: string, at: number) => Promise<void>;

/** Arms timers; `fire` is called when one is due. */
export interface Timers {
  readonly name: 'in-process' | 'bullmq';
  start(fire: FireTimer): Promise<void>;
  arm(id: string, at: number): Promise<void>;
  /** Forgets a timer where that is cheap (in memory); a BullMQ timer stays, and its firing must find nothing to do. */
  disarm(id: string): Promise<void>;
  stop(): Promise<void>;
}

/** setTimeout can wait at most this long; longer waits are re-armed. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Timers in this process. */
export class InProcessTimers implements Timers {
  readonly name = 'in-process';
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private fire: FireTimer | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  async start(fire: FireTimer): Promise<void> {
    this.fire = fire;
  }

  async arm(id: string, at: number): Promise<void> {
    await this.disarm(id);
    const wait = Math.max(0, at - this.now());
    const timer = setTimeout(() => {
      this.timers.delete(id);
      if (wait > MAX_TIMEOUT_MS) void this.arm(id, at);
      else void this.fire?.(id, at);
    }, Math.min(wait, MAX_TIMEOUT_MS));
    timer.unref();
    this.timers.set(id, timer);
  }

  async disarm(id: string): Promise<void> {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  async stop(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.fire = undefined;
  }
}

/**
 * BullMQ delayed jobs on the Redis store, in the queue `queueName`: one job per
 * id and time. With the instance's `connections`, the queue and the worker
 * send their commands on its command connection; the worker's blocking wait
 * for the next job needs one of its own all the same.
 */
export class BullMqTimers implements Timers {
  readonly name = 'bullmq';
  private queue: Queue | undefined;
  private worker: Worker | undefined;

  constructor(
    private readonly url: string,
    private readonly queueName: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly connections?: RedisConnections,
  ) {}

  async start(fire: FireTimer): Promise<void> {
    const { Queue, Worker } = await import('bullmq');
    const connection = this.connections?.command ?? { url: this.url, maxRetriesPerRequest: null };
    this.queue = new Queue(this.queueName, { connection });
    this.worker = new Worker(this.queueName, async (entry) => {
      const { id, routineId, at } = entry.data as { id?: string; routineId?: string; at: number };
      // `routineId`: timers armed before the queue was shared by other timers.
      await fire(id ?? routineId ?? '', at);
    }, { connection, concurrency: 4 });
    // Without a listener, BullMQ prints every error of a lost connection to stderr, past the log.
    const onError = (error: Error) => this.log.error({ err: error, queue: this.queueName }, 'timer queue error');
    this.queue.on('error', onError);
    this.worker.on('error', onError);
    await this.worker.waitUntilReady();
  }

  async arm(id: string, at: number): Promise<void> {
    await this.queue?.add('fire', { id, at }, { jobId: `${id}_${at}`, delay: Math.max(0, at - this.now()), removeOnComplete: true, removeOnFail: 100 });
  }

  async disarm(id: string): Promise<void> {
    void id;
  }

  async stop(): Promise<void> {
    await this.worker?.close();
    await this.queue?.close();
  }
}
