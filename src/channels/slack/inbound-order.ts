/**
 * Order and uniqueness of inbound events. Slack sends one channel message that
 * @mentions the bot twice (as `app_mention` and as `message`), and handlers run
 * concurrently while a name look-up is in flight; these two helpers make each
 * message count once and keep a conversation's events in arrival order.
 */

/** A bounded set of recently seen keys (oldest forgotten first). */
export class RecentKeys {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 5_000) {}

  /** Records `key`; false when it was already there. */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value!);
    return true;
  }
}

/** Runs tasks one after another per key, and concurrently across keys. */
export class SerialChains {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `task` after the earlier tasks of `key` have settled. */
  run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
