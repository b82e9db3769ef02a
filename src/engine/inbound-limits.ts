/**
 * Limits on what people send: message size and per-user rate. A message over a
 * limit is not processed, and its sender is told so; nothing is dropped silently.
 *
 * The rate bounds what a person can make the bot say, not only what the model
 * reads: every addressed message (oversized ones too) and every command but
 * /stop counts, and over the rate the sender gets one notice a window, which
 * says that what they send meanwhile is dropped as well.
 */

/** A refusal to tell the sender about. */
export interface Refusal {
  text: string;
}

/** A sender over the rate: what to tell them, and whether to (once a window). */
export interface RateRefusal {
  refusal: Refusal;
  notify: boolean;
}

/** Counts a sender's messages and commands against the per-user rate: in memory, or in Redis for several instances. */
export interface SenderRate {
  /** Counts one event of `userId`, or refuses it (uncounted) when they are over the rate. */
  take(userId: string): RateRefusal | undefined | Promise<RateRefusal | undefined>;
}

/** The rate window: messages of the last minute count. */
export const RATE_WINDOW_MS = 60_000;
/** A sender over the rate is told at most once in this long: once a window, so a burst gets the limit's replies and one notice. */
export const RATE_NOTICE_EVERY_MS = RATE_WINDOW_MS;
const WINDOW_MS = RATE_WINDOW_MS;

/** How often users whose window has emptied are forgotten. */
const SWEEP_EVERY_MS = 10_000;

/**
 * A user's messages of the last minute: one time, or several oldest first.
 * Most users send one message in a minute; a bare number keeps them small.
 */
type Window = number | number[];

/** A sliding-window rate limit per user, kept in memory for the users of the last minute only. */
export class InboundLimiter implements SenderRate {
  private readonly windows = new Map<string, Window>();
  private readonly warned = new Map<string, number>();
  private lastSweep: number;

  constructor(
    private readonly perMinute: number,
    private readonly maxChars: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastSweep = now();
  }

  /** Users tracked right now (those who wrote in the last minute, at most). */
  get trackedUsers(): number {
    return this.windows.size;
  }

  /**
   * Checks one message: its sender's rate first (an oversized message counts
   * too: its refusal is a reply), then its size. Returns a refusal, or
   * undefined when it may proceed. A refusal for rate is only worth telling
   * once per window, so `notify` says whether to send it.
   */
  check(userId: string, text: string): RateRefusal | undefined {
    return this.take(userId) ?? this.checkSize(text);
  }

  take(userId: string): RateRefusal | undefined {
    const now = this.now();
    this.sweep(now);
    const stored = this.windows.get(userId);
    const recent = (stored === undefined ? [] : typeof stored === 'number' ? [stored] : stored).filter((time) => now - time < WINDOW_MS);
    if (recent.length >= this.perMinute) {
      this.windows.set(userId, recent);
      const lastWarned = this.warned.get(userId);
      const notify = lastWarned === undefined || now - lastWarned >= RATE_NOTICE_EVERY_MS;
      if (notify) this.warned.set(userId, now);
      return { refusal: rateRefusal(this.perMinute, WINDOW_MS - (now - recent[0]!)), notify };
    }
    recent.push(now);
    this.windows.set(userId, recent.length === 1 ? now : recent);
    return undefined;
  }

  /** Checks the size alone (where the rate is counted elsewhere, as in Redis for several instances). */
  checkSize(text: string): RateRefusal | undefined {
    if (text.length <= this.maxChars) return undefined;
    return {
      refusal: { text: `Your message is ${text.length.toLocaleString('en-US')} characters long; the limit is ${this.maxChars.toLocaleString('en-US')}. It was not processed: please shorten it or split it up.` },
      notify: true,
    };
  }

  /** Forgets users whose window has emptied: the maps hold the last minute's users, not everyone ever seen. */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [userId, window] of this.windows) {
      const last = typeof window === 'number' ? window : window[window.length - 1]!;
      if (now - last >= WINDOW_MS) this.windows.delete(userId);
    }
    for (const [userId, time] of this.warned) if (now - time >= WINDOW_MS) this.warned.delete(userId);
  }
}

/** What a sender over the rate is told (once a window), with how long until a message would be taken. */
export function rateRefusal(perMinute: number, waitMs: number): Refusal {
  const wait = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    text: `You are sending messages faster than ${perMinute} a minute, so this one was not processed, nor what you send in the next ${wait} s. Please wait, then send again what you need answered.`,
  };
}

/**
 * Counts one event that gets a reply (a command, an oversized message) against
 * its sender's rate: within it, `reply` runs; over it, the event is dropped and
 * the sender is told with `notify`, once a window.
 */
export async function withinRate(rate: SenderRate, userId: string, reply: () => Promise<unknown>, notify: (text: string) => Promise<unknown>): Promise<void> {
  const limited = await rate.take(userId);
  if (!limited) await reply();
  else if (limited.notify) await notify(limited.refusal.text);
}

/** What the sender of a message refused because its conversation's queue is full is told. */
export function queueFullText(waiting: number): string {
  return `I already have ${waiting} messages waiting in this conversation, so this one was not taken. Please wait for my answer and send it again.`;
}
