/** The work queue of a single process: runs in arrival order, at most `maxParallel` at once. */
import type { RunWork, WorkQueue } from './types.js';

/** Runs work in this process, in arrival order, at most `maxParallel` at once. */
export class InProcessEngine implements WorkQueue {
  readonly name = 'in-process';
  private readonly queue: string[] = [];
  private readonly running = new Set<Promise<void>>();
  private run: RunWork | undefined;
  private closed = false;

  constructor(private readonly maxParallel: number) {}

  async start(run: RunWork): Promise<void> {
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
