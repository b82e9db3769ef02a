/**
 * What each person has sent in files today (UTC), against
 * `attachments.maxBytesPerUserPerDay`. Counted in the store, so that every
 * instance of the bot books against the same day.
 */
import type { Namespace } from '../../store/store.js';

/** A person's bytes of files per day. */
export class DailyBytes {
  constructor(
    private readonly counts: Namespace<number>,
    /** The most one person may send in a day, in bytes. */
    readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bytes `userId` may still send today. */
  async remaining(userId: string): Promise<number> {
    return Math.max(0, this.limit - ((await this.counts.get(this.keyOf(userId))) ?? 0));
  }

  /** Books `bytes` for `userId` today; false (and nothing booked) when that would pass the limit. */
  async book(userId: string, bytes: number): Promise<boolean> {
    let booked = false;
    await this.counts.update(this.keyOf(userId), (used = 0) => {
      booked = used + bytes <= this.limit;
      return booked ? used + bytes : used;
    });
    // The day before is over: its count goes, so that a person keeps one count at most.
    await this.counts.delete(this.keyOf(userId, -1));
    return booked;
  }

  private keyOf(userId: string, days = 0): string {
    return `${userId}:${new Date(this.now() + days * 86_400_000).toISOString().slice(0, 10)}`;
  }
}
