/**
 * Where job runs wait for a slot and are started: in this process (the
 * default), or on BullMQ when the store is Redis (its queue, worker
 * concurrency and stalled-job recovery). Either way the job's state lives in
 * pincer's store; an engine only decides when `run(id)` is called, at most
 * `maxParallel` at once.
 */
import type { Queue, Worker } from 'bullmq';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { isRedisUrl } from '../store/url.js';

/** Runs one job to its next stop; resolves when the run is over. */
export type RunJob = (id: string) => Promise<void>;

/** A queue of job runs with bounded parallelism. */
export interface JobEngine {
  readonly name: 'in-process' | 'bullmq';
  /** Starts taking runs; `run` is called for each. */
  start(run: RunJob): Promise<void>;
  /** Queues a run of job `id`. */
  enqueue(id: string): Promise<void>;
  /** Stops taking runs and waits for the running ones to return. */
  stop(): Promise<void>;
}

/** Runs jobs in this process, in arrival order, at most `maxParallel` at once. */
export class InProcessEngine implements JobEngine {
  readonly name = 'in-process';
  private readonly queue: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private run: RunJob | undefined;
  private closed = false;

  constructor(private readonly maxParallel: number) {}

  async start(run: RunJob): Promise<void> {
    this.run = run;
    this.pump();
  }

  async enqueue(id: string): Promise<void> {
    if (this.closed || this.queue.includes(id)) return;
    this.queue.push(id);
    this.pump();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    const run = this.run;
    while (run && !this.closed && this.running.size < this.maxParallel && this.queue.length) {
      const id = this.queue.shift()!;
      const done: Promise<void> = run(id).finally(() => {
        this.running.delete(done);
        this.pump();
      });
      this.running.add(done);
    }
  }
}

/** Options of {@link BullMqEngine}. */
export interface BullMqEngineOptions {
  /** The Redis URL (the store's). */
  url: string;
  maxParallel: number;
  /** The queue's name; one per bot. */
  queueName?: string;
  log: Logger;
}

/**
 * Runs jobs through BullMQ on Redis. A run is a BullMQ job carrying the job
 * id; the worker's concurrency is `maxParallel`, and a run whose process died
 * is picked up again by BullMQ's stalled-job check.
 */
export class BullMqEngine implements JobEngine {
  readonly name = 'bullmq';
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private runs = 0;

  constructor(private readonly options: BullMqEngineOptions) {}

  async start(run: RunJob): Promise<void> {
    const { Queue, Worker } = await import('bullmq');
    const name = this.options.queueName ?? 'pincer-jobs';
    const connection = { url: this.options.url, maxRetriesPerRequest: null };
    this.queue = new Queue(name, { connection });
    this.worker = new Worker(name, async (entry) => run(String((entry.data as { id: string }).id)), {
      connection,
      concurrency: this.options.maxParallel,
    });
    this.worker.on('failed', (entry, error) => this.options.log.error({ err: error, job: (entry?.data as { id?: string } | undefined)?.id }, 'job run failed on the queue'));
    this.worker.on('error', (error) => this.options.log.error({ err: error }, 'job queue error'));
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

/** BullMQ when the store is Redis (jobs queue next to the state), in this process otherwise. */
export function jobEngineFor(config: Pick<Config, 'storeUrl' | 'jobs'>, log: Logger): JobEngine {
  const url = config.storeUrl;
  if (url && isRedisUrl(url)) return new BullMqEngine({ url, maxParallel: config.jobs.maxParallel, log });
  return new InProcessEngine(config.jobs.maxParallel);
}
