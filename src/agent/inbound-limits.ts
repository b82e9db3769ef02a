/**
 * Limits on what people send: message size and per-user rate. A message over a
 * limit is not processed, and its sender is told so; nothing is dropped silently.
 */

/** A refusal to tell the sender about. */
export interface Refusal {
  text: string;
}

/** A sliding-window rate limit per user, kept in memory. */
export class InboundLimiter {
  private readonly windows = new Map<string, number[]>();
  private readonly warned = new Map<string, number>();

  constructor(
    private readonly perMinute: number,
    private readonly maxChars: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Checks one message. Returns a refusal, or undefined when it may proceed. A
   * refusal for rate is only worth telling once per window, so `notify` says
   * whether to send it.
   */
  check(userId: string, text: string): { refusal: Refusal; notify: boolean } | undefined {
    if (text.length > this.maxChars) {
      return {
        refusal: { text: `Your message is ${text.length.toLocaleString('en-US')} characters long; the limit is ${this.maxChars.toLocaleString('en-US')}. It was not processed: please shorten it or split it up.` },
        notify: true,
      };
    }
    const now = this.now();
    const recent = (this.windows.get(userId) ?? []).filter((time) => now - time < 60_000);
    if (recent.length >= this.perMinute) {
      this.windows.set(userId, recent);
      const wait = Math.ceil((60_000 - (now - recent[0]!)) / 1000);
      const lastWarned = this.warned.get(userId) ?? 0;
      const notify = now - lastWarned > 10_000;
      if (notify) this.warned.set(userId, now);
      return { refusal: { text: `You are sending messages faster than ${this.perMinute} a minute, so this one was not processed. Please wait ${wait} s and send it again.` }, notify };
    }
    recent.push(now);
    this.windows.set(userId, recent);
    return undefined;
  }
}
