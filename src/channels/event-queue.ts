import { acknowledge, whenAcknowledged } from './types.js';

/**
 * An unbounded async queue that an adapter pushes platform events into and the
 * agent reads as an async iterable. Pushing never waits for a turn, so a
 * platform handler never blocks behind one; it may wait, briefly, for the event
 * to be stored ({@link pushAcknowledged}).
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiters: ((result: IteratorResult<T>) => void)[] = [];
  private closed = false;

  /** Adds an event; ignored after `close`. */
  push(item: T): void {
    if (this.closed) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: item, done: false });
    else this.items.push(item);
  }

  /**
   * Adds an event and resolves once the agent has acknowledged it (see
   * `acknowledge` of types.ts), or after `timeoutMs` at the latest, so that a platform
   * that redelivers what it was not told was received (Telegram's offset) keeps
   * an event until it is stored.
   */
  pushAcknowledged(item: T & object, timeoutMs: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => acknowledge(item), timeoutMs);
      timer.unref();
      whenAcknowledged(item, () => {
        clearTimeout(timer);
        resolve();
      });
      this.push(item);
    });
  }

  /** Ends the stream once queued events are read. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) waiter({ value: undefined, done: true });
    this.waiters = [];
  }

  get isClosed(): boolean {
    return this.closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
