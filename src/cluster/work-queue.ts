/**
 * A work queue on BullMQ, for instances that share a Redis store: a run is a
 * BullMQ job carrying the work's id, the worker's concurrency bounds the runs,
 * and a run whose process died is picked up again by BullMQ's stalled-job check.
 */
import type { Queue, Worker } from 'bullmq';
import type { RunWork, WorkQueue } from '../deployment/types.js';
import type { Logger } from '../log.js';
import type { RedisConnections } from '../store/redis-connections.js';

/** Options of {@link BullMqEngine}. */
export interface BullMqEngineOptions {
  /** The Redis URL (the store's). */
  url: string;
  maxParallel: number;
  /** The queue's name; one per bot. */
  queueName?: string;
  log: Logger;
  /** The instance's connections: the queue and the worker's commands go on its command connection. */
  connections?: RedisConnections;
}

/**
 * Runs jobs through BullMQ on Redis. A run is a BullMQ job carrying the job
 * id; the worker's concurrency is `maxParallel`, and a run whose process died
 * is picked up again by BullMQ's stalled-job check.
 */
export class BullMqEngine implements WorkQueue {
  readonly name = 'bullmq';
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private runs = 0;

  constructor(private readonly options: BullMqEngineOptions) {}

  async start(run: RunWork): Promise<void> {
    const { Queue, Worker } = await import('bullmq');
    const name = this.options.queueName ?? 'pincer-jobs';
    // The worker's blocking wait for the next run holds a connection of its own either way.
    const connection = this.options.connections?.command ?? { url: this.options.url, maxRetriesPerRequest: null };
    this.queue = new Queue(name, { connection });
    this.worker = new Worker(name, async (entry) => run(String((entry.data as { id: string }).id)), {
      connection,
      concurrency: this.options.maxParallel,
    });
    this.worker.on('failed', (entry, error) => this.options.log.error({ err: error, job: (entry?.data as { id?: string } | undefined)?.id }, 'job run failed on the queue'));
    // Without a listener, BullMQ prints every error of a lost connection to stderr, past the log.
    const onError = (error: Error) => this.options.log.error({ err: error }, 'job queue error');
    this.queue.on('error', onError);
    this.worker.on('error', onError);
    await this.worker.waitUntilReady();
  }

  async enqueue(id: string): Promise<void> {
    if (!this.queue) throw new Error('the job engine is not started');
    this.runs += 1;
    await this.queue.add('run', { id }, { jobId: `${id}-${Date.now()}-${this.runs}`, removeOnComplete: true, removeOnFail: 100 });
  }

  async stop(): Promise<void> {
    await this.worker?.close();
    await this.queue?.close();
  }
}
