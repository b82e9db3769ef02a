/**
 * Threads waiting for a free turn slot in this instance. A thread poked while
 * every slot was taken is noted here, not taken: the instance takes it when
 * one of its own slots frees (looked at every few milliseconds, and at once
 * when a lease goes back), oldest first, unless another instance took it
 * meanwhile, so work waits in Redis for the first free slot of any instance.
 * The sweep (threads.ts) takes a thread left waiting longer than a lease TTL.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { threadKeys } from './thread-storage.js';

/** What the waiting list needs of the coordinator. */
export interface WaitingHost {
  /** The instance's Redis connection (read when needed). */
  redis(): Redis;
  log: Logger;
  /** The set of threads with work not finished by a lease holder. */
  openSet: string;
  /** Whether a turn slot is free now. */
  spare(): boolean;
  /** Whether this instance takes threads no more (closed, or shutting down). */
  stopped(): boolean;
  /** Whether this instance is closed (a look under way is not repeated). */
  closed(): boolean;
  /** Takes the thread (or reads its new entries when this instance holds it). */
  offer(thread: string): Promise<void>;
}

/** The threads waiting for a free slot, oldest first, and the one look at them that may be under way. */
export class WaitingThreads {
  /** When each waiting thread was poked, oldest first. */
  private readonly waiting = new Map<string, number>();
  private pulling: Promise<void> | undefined;
  private pullAgain = false;

  constructor(private readonly host: WaitingHost) {}

  /** Notes a thread with new work that no instance may hold, and takes it when a slot is free. */
  wait(thread: string): void {
    if (!this.waiting.has(thread)) this.waiting.set(thread, Date.now());
    void this.pull();
  }

  /** Whether the thread is waiting here. */
  has(thread: string): boolean {
    return this.waiting.has(thread);
  }

  /** Whether the thread was poked after `since` (epoch ms): the first free slot takes it, not the sweep. */
  pokedAfter(thread: string, since: number): boolean {
    return (this.waiting.get(thread) ?? 0) > since;
  }

  /** The thread waits no more (taken, or found held by another instance). */
  drop(thread: string): void {
    this.waiting.delete(thread);
  }

  /** Forgets the threads poked at or before `since` that are no longer open (someone finished them). */
  dropClosed(open: ReadonlySet<string>, since: number): void {
    for (const [thread, at] of this.waiting) if (at <= since && !open.has(thread)) this.waiting.delete(thread);
  }

  /** Forgets every waiting thread (shutting down: the others, or the restart, take them). */
  clear(): void {
    this.waiting.clear();
  }

  /**
   * Takes the waiting threads, oldest first, one at a time while a turn slot is
   * free (a thread taken starts its turn before the next is tried, so an
   * instance takes no more than it can run).
   */
  pull(): Promise<void> {
    if (this.pulling) {
      // A thread poked while a look is under way is looked at right after it.
      this.pullAgain = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      do {
        this.pullAgain = false;
        await this.takeWaiting();
      } while (this.pullAgain && !this.host.closed());
    })().finally(() => (this.pulling = undefined));
    return this.pulling;
  }

  private async takeWaiting(): Promise<void> {
    const { host } = this;
    if (!this.waiting.size || !host.spare()) return;
    // One look at Redis drops the threads that another instance took (or took and finished) meanwhile.
    const threads = [...this.waiting.keys()];
    const pipeline = host.redis().pipeline();
    for (const thread of threads) pipeline.sismember(host.openSet, thread).exists(threadKeys(thread).lease);
    const results = (await pipeline.exec()) ?? [];
    for (const [i, thread] of threads.entries()) {
      if (host.stopped() || !host.spare()) return;
      this.waiting.delete(thread);
      const free = results[2 * i]?.[1] === 1 && results[2 * i + 1]?.[1] === 0;
      if (free) await host.offer(thread).catch((error: unknown) => host.log.warn({ err: error, thread }, 'cluster: could not take a thread'));
    }
  }
}
