/**
 * Where job runs wait for a slot and are started: the deployment's work queue
 * (in this process, or on BullMQ when instances share a Redis store). Either
 * way the job's state lives in pincer's store; a queue only decides when
 * `run(id)` is called, at most `maxParallel` at once.
 */
import type { RunWork, WorkQueue } from '../deployment/types.js';

/** A queue of job runs with bounded parallelism. */
export type JobEngine = WorkQueue;

/** Runs one job to its next stop; resolves when the run is over. */
export type RunJob = RunWork;

/** The queue's name: one per bot. */
export const JOB_QUEUE = 'pincer-jobs';
