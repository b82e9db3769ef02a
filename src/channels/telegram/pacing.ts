/**
 * Pacing of the messages the bot posts, within Telegram's limits: about one
 * message a second in a chat, 20 a minute in a group, 30 a second overall.
 *
 * Only calls that post or change a message are paced. A typing indicator, an
 * admin lookup or a button acknowledgement is not a message; spent in a chat's
 * one-a-second slot, it would hold the answer back by a second.
 *
 * Written here rather than with @grammyjs/transformer-throttler: its Bottleneck
 * limiters cost about 10 ms per call even when nothing has to wait (measured
 * with bench/reply-latency), a tenth of a second's budget spent on every answer.
 * Here a call that is within the limits starts at once, without a timer.
 */
import type { Transformer } from 'grammy';
import type { SharedBudget } from '../types.js';

/** Telegram's message limits, as its Bot FAQ states them. */
export interface PacingLimits {
  /** Least time between two messages in one chat. */
  chatIntervalMs: number;
  /** Messages per `groupPeriodMs` in one group. */
  groupLimit: number;
  groupPeriodMs: number;
  /** Messages per `globalPeriodMs` over all chats. */
  globalLimit: number;
  globalPeriodMs: number;
}

/** The limits of the public Bot API. */
export const DefaultPacingLimits = {
  chatIntervalMs: 1_000,
  groupLimit: 20,
  groupPeriodMs: 60_000,
  globalLimit: 30,
  globalPeriodMs: 1_000,
} as const satisfies PacingLimits;

/** Methods that post or change a message in a chat: the ones Telegram's message limits count. */
const PACED_METHODS: ReadonlySet<string> = new Set([
  'sendMessage',
  'sendPhoto',
  'sendAudio',
  'sendDocument',
  'sendVideo',
  'sendAnimation',
  'sendVoice',
  'sendVideoNote',
  'sendPaidMedia',
  'sendMediaGroup',
  'sendLocation',
  'sendVenue',
  'sendContact',
  'sendPoll',
  'sendDice',
  'sendSticker',
  'sendInvoice',
  'sendGame',
  'copyMessage',
  'copyMessages',
  'forwardMessage',
  'forwardMessages',
  'editMessageText',
  'editMessageCaption',
  'editMessageMedia',
  'editMessageLiveLocation',
  'stopMessageLiveLocation',
  'editMessageReplyMarkup',
  'stopPoll',
]);

/** Whether Telegram counts `method` against a chat's message limits. */
export function isPacedMethod(method: string): boolean {
  return PACED_METHODS.has(method);
}

/** Time as the pacer sees it; tests drive it by hand. */
export interface PacingClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: PacingClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** One chat's pacing state: its queue of calls and its recent message starts. */
interface ChatLane {
  /** Settles when the chat's last queued call has. */
  tail: Promise<unknown>;
  pending: number;
  /** Start times of recent messages, oldest first (the last one, or a group's last `groupLimit`). */
  starts: number[];
}

/**
 * Runs message calls per chat in order, each when Telegram's limits allow it.
 * @example
 * const pacer = new MessagePacer();
 * await pacer.run(chatId, () => api.sendMessage(chatId, 'hi'));
 */
export class MessagePacer {
  private readonly lanes = new Map<string, ChatLane>();
  /** Start times of the last `globalLimit` messages over all chats, ascending. */
  private readonly global: number[] = [];
  private lastSweep: number;

  /**
   * @param shared where several instances send as one bot, the overall limit
   *   is booked there instead of in this process
   */
  constructor(
    private readonly limits: PacingLimits = DefaultPacingLimits,
    private readonly clock: PacingClock = realClock,
    private readonly shared?: SharedBudget,
  ) {
    this.lastSweep = clock.now();
  }

  /** Chats with pacing state (for tests: idle chats are forgotten). */
  get trackedChats(): number {
    return this.lanes.size;
  }

  /** Runs `call` after the chat's earlier calls, once the limits allow one more message. */
  run<T>(chatId: string, call: () => Promise<T>): Promise<T> {
    this.sweep();
    const lane = this.lanes.get(chatId) ?? { tail: Promise.resolve(), pending: 0, starts: [] };
    this.lanes.set(chatId, lane);
    lane.pending += 1;
    const result = lane.tail.then(async () => {
      await this.admit(lane, isGroupChat(chatId));
      return call();
    });
    lane.tail = result.then(
      () => void (lane.pending -= 1),
      () => void (lane.pending -= 1),
    );
    return result;
  }

  /** Waits (without a timer when none is needed) until one more message fits, and books it. */
  private async admit(lane: ChatLane, group: boolean): Promise<void> {
    const { limits, clock } = this;
    let at = Math.max(clock.now(), (lane.starts.at(-1) ?? -Infinity) + limits.chatIntervalMs);
    if (group && lane.starts.length >= limits.groupLimit) at = Math.max(at, lane.starts.at(-limits.groupLimit)! + limits.groupPeriodMs);
    if (at > clock.now()) await clock.sleep(at - clock.now());
    const start = await this.bookOverall();
    lane.starts.push(start);
    if (lane.starts.length > (group ? limits.groupLimit : 1)) lane.starts.shift();
    if (start > clock.now()) await clock.sleep(start - clock.now());
  }

  /**
   * Books the start of one more message against the overall limit: in Redis
   * when several instances send as one bot, else in this process (in call
   * order at the present time, so the list stays ascending).
   */
  private async bookOverall(): Promise<number> {
    const { limits, clock } = this;
    if (this.shared) return clock.now() + (await this.shared.reserve('telegram:messages', limits.globalLimit, limits.globalPeriodMs));
    const now = clock.now();
    const start = this.global.length >= limits.globalLimit ? Math.max(now, this.global.at(-limits.globalLimit)! + limits.globalPeriodMs) : now;
    this.global.push(start);
    if (this.global.length > limits.globalLimit) this.global.shift();
    return start;
  }

  /** Forgets chats with nothing queued whose last message is older than every window. */
  private sweep(): void {
    const now = this.clock.now();
    const horizon = Math.max(this.limits.groupPeriodMs, this.limits.chatIntervalMs);
    if (now - this.lastSweep < horizon) return;
    this.lastSweep = now;
    for (const [chatId, lane] of this.lanes) {
      if (lane.pending === 0 && (lane.starts.at(-1) ?? -Infinity) <= now - horizon) this.lanes.delete(chatId);
    }
  }
}

/** Group and supergroup ids are negative; users' (private chats) are positive. */
function isGroupChat(chatId: string): boolean {
  return chatId.startsWith('-');
}

/**
 * A transformer that paces message posts and edits per chat and lets every
 * other call through at once: `sendChatAction` is not a message, so
 * "typing…" never delays an answer.
 */
export function messagePacing(pacer: MessagePacer = new MessagePacer()): Transformer {
  return (prev, method, payload, signal) => {
    const chatId = payload && 'chat_id' in payload ? String(payload.chat_id) : undefined;
    if (chatId === undefined || !isPacedMethod(method)) return prev(method, payload, signal);
    return pacer.run(chatId, () => prev(method, payload, signal));
  };
}
