/**
 * How this instance is deployed, chosen once by the composition root from the
 * store URL: one process on its own store (SQLite, Postgres), or one of several
 * instances on a Redis store. Everything that differs between the two sits
 * behind these interfaces, each with a local and a Redis implementation
 * (src/deployment/local.ts, src/cluster/deployment.ts): the intake of people's
 * messages into threads, where thread records live, timers, claims, queues of
 * work, rate limits, the cost budget, elections of platform duties, and the
 * signals the instances send each other. The runtime and the features take a
 * deployment and never ask which one it is.
 */
import type { ChannelDeps, InboundMessage } from '../channels/types.js';
import type { CostBudget } from '../engine/budget.js';
import type { SenderRate } from '../engine/inbound-limits.js';
import type { QueuedMessage } from '../engine/history.js';
import type { ThreadStorage } from '../engine/thread-storage.js';
import type { UsageLedger } from '../engine/usage.js';
import type { Timers } from '../store/timers.js';
import type { SettingsVersion } from '../tools/settings-version.js';
import type { RateLimiter } from '../tools/stages/rate-limit.js';

/** What the intake asks of the runtime that runs the threads. */
export interface ThreadHost {
  /**
   * Picks up a thread's unfinished work (an interrupted turn, waiting
   * messages); the inbox ids it queued. `handover`: a shared thread taken in
   * the ordinary course (not after a restart of this process).
   */
  takeOver(thread: string, handover: boolean): Promise<string[]>;
  /**
   * Hands accepted messages to the thread's runner, in order. `shared`: the
   * same messages as kept in an inbox outside this process (Redis), which the
   * thread's record here learns of without writing them again; empty when the
   * intake kept them in the record itself.
   */
  deliver(thread: string, messages: InboundMessage[], shared: readonly QueuedMessage[]): void;
  /** Messages waiting in the thread's runner here. */
  queued(thread: string): number;
  /** Whether this instance has a free turn slot. */
  spare(): boolean;
  /** Whether the thread has a runner with work here. */
  busy(thread: string): boolean;
  /** Drops what this instance remembers of the thread (another instance may write it next). */
  forget(thread: string): void;
  /** Resolves once the thread's writes made so far are stored. */
  flush(thread: string): Promise<void>;
  /** The thread was taken away (its lease lapsed): its work here stops at once, without a word. */
  lost(thread: string): void;
  /** Keeps background work (a write, a notice) visible to shutdown and idle checks. */
  track(work: Promise<unknown>): void;
}

/**
 * The way of people's messages into their threads: kept durably (in the
 * thread's record, or in a shared inbox on Redis), counted against each
 * sender's rate and each thread's queue, and handed to the thread's runner on
 * the instance that holds the thread.
 */
export interface ThreadIntake {
  /** Starts handing threads to `host`, the unfinished ones first (after a restart, or another instance's). */
  start(host: ThreadHost): Promise<void>;
  /**
   * Takes an addressed message from `userId`. Synchronous up to the runner, so
   * each thread keeps its order. True when the intake acknowledges the event
   * itself, once it is stored.
   */
  accept(event: InboundMessage, userId: string): boolean;
  /** During shutdown: keeps the message for the next run (or another instance). True when it acknowledges the event itself. */
  keep(event: InboundMessage): boolean;
  /** Whether this instance holds the thread (may run its turns). */
  holds(thread: string): boolean;
  /** Asks, before a thread's next tool batch or message, whether this instance still holds it. */
  claim?(thread: string): Promise<boolean>;
  /** The thread's runner here has nothing more to do. */
  idle(thread: string): Promise<void>;
  /** Shutdown has begun: no new thread is taken here (another instance, or the restart, takes it). */
  stopTaking?(): void;
  /**
   * During shutdown, once the runners stopped: the threads held here go back at
   * once (their writes stored first), so that the other instances carry on
   * without waiting for this process to end.
   */
  giveBack?(): Promise<void>;
}

/** Signals between the instances (none on a single process). */
export interface Signals {
  /** Asks the instance that holds `thread` to stop its turn (this one is asked separately). */
  stop(thread: string, by: string): Promise<void>;
  /** Calls `handler` when another instance asks for a thread's turn to stop. */
  onStop(handler: (thread: string) => void): void;
  /** Calls `handler` when tool policy or permissions changed on another instance. */
  onSettingsChanged(handler: () => void): void;
  /** Tells the other instances that background work `id` (a job) has a message waiting in its record. */
  mail(id: string): Promise<void>;
  /** Calls `handler` when another instance posted a message to background work `id`. */
  onMail(handler: (id: string) => void): void;
}

/** Claims something once, atomically, among every process that shares the store (a routine's firing). */
export interface Claims {
  /** True for the one caller that claimed `key` of `owner` first; false for everyone after, until the claim expires. */
  claim(owner: string, key: string): Promise<boolean>;
  /** When the claim of `key` expires (ms), or undefined when there is none. */
  expiresAt(owner: string, key: string): Promise<number | undefined>;
  /** Drops the claims of `owner` (deleted). */
  forget(owner: string): Promise<void>;
  close(): Promise<void>;
}

/** Runs one unit of work (a job run) to its next stop; resolves when it is over. */
export type RunWork = (id: string) => Promise<void>;

/** A queue of work with bounded parallelism: in this process, or on BullMQ. */
export interface WorkQueue {
  readonly name: 'in-process' | 'bullmq';
  /** Starts taking work; `run` is called for each. */
  start(run: RunWork): Promise<void>;
  /** Queues a run of `id`. */
  enqueue(id: string): Promise<void>;
  /** Stops taking work and waits for the running ones to return. */
  stop(): Promise<void>;
}

/** The parts of a deployment a channel adapter receives (through ChannelDeps). */
export type ChannelPorts = Pick<ChannelDeps, 'election' | 'sharedBudget'>;

/** How this instance is deployed. */
export interface Deployment {
  /** For logs and /readyz: `single` (one process) or `cluster` (an instance on Redis). */
  readonly kind: 'single' | 'cluster';
  readonly intake: ThreadIntake;
  readonly signals: Signals;
  /** Each sender's rate, counted for the whole bot. */
  readonly senderRate: SenderRate;
  /** Where thread records live. */
  readonly threadStorage: ThreadStorage;
  /** Tools' rate limits for the bot as a whole; undefined: the pipeline's own, in memory. */
  readonly toolRateLimiter?: RateLimiter;
  /** The version of policy and permissions other instances may change; undefined on a single process. */
  readonly settingsVersion?: SettingsVersion;
  /** The daily cost limit's bookings. */
  costBudget(usage: UsageLedger, limitUsd: number, bookingTtlMs: number): CostBudget;
  /** Named timers that fire once at a time (approval expiries, routine firings). */
  timers(name: string): Timers;
  /** Claims kept `ttlMs`, under `name`. */
  claims(name: string, ttlMs: number): Claims;
  /** A queue of work named `name`, at most `maxParallel` at once. */
  workQueue(name: string, maxParallel: number): WorkQueue;
  /** What the channel named `name` gets: its election of duties and the budget of platform limits shared by the instances. */
  channel(name: string): Promise<ChannelPorts>;
  /** The live instances sharing the store and the channels each runs, with this one's id; undefined on a single process. */
  instances?(): Promise<{ self: string; instances: Array<{ id: string; channels: string[] }> }>;
  /** Backlog across the instances, for metrics; undefined on a single process (the runtime's own count is all). */
  backlog?(): Promise<{ messages: number; threads: number }>;
  /** Leaves: gives back what it holds and closes its connections. */
  close(): Promise<void>;
}
