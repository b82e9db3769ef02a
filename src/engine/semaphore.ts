/**
 * A fair counting semaphore: at most `limit` holders at once, waiters served in
 * arrival order, none ever dropped.
 */
export class FairSemaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Holders right now. */
  get running(): number {
    return this.active;
  }

  /** Waiters right now. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `work` once a slot is free. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active -= 1;
  }
}
