/**
 * People who converse with a cluster the way people do: write a message, wait
 * for its answer, (think,) write the next. Shared by the capacity and the
 * rolling-restart parts of bench/cluster; each message's wait is recorded.
 */
import { echoesIn, type ClusterChat } from '../test/e2e/cluster-harness.js';

/** One message written, and when its answer was seen. */
export interface Reply {
  id: string;
  thread: number;
  /** performance.now() just before it was written. */
  sentAt: number;
  /** When its echo was first seen in the chat; unset when not within the wait. */
  answeredAt?: number;
}

/** How one conversation goes on. */
export interface ConverseOptions {
  /** Messages to write; unset: until `going()` is false. */
  messages?: number;
  going?: () => boolean;
  /** The pause after an answer before the next message (none by default). */
  thinkMs?: () => number;
  /** How long to wait for an answer before writing the next message anyway. */
  answerTimeoutMs: number;
  /** Every message written is added here as it is written. */
  replies: Reply[];
  /** What each chat was sent, by thread, for `answerReport`. */
  sent: Map<number, string[]>;
}

const POLL_MS = 50;

/** One conversation: `t<thread>-m<seq>` written one after the other, each once the previous one was answered. */
export async function converse(chat: ClusterChat, options: ConverseOptions): Promise<void> {
  for (let seq = 1; (options.messages === undefined || seq <= options.messages) && (options.going?.() ?? true); seq++) {
    const id = `t${chat.thread}-m${seq}`;
    const reply: Reply = { id, thread: chat.thread, sentAt: performance.now() };
    options.replies.push(reply);
    options.sent.set(chat.thread, [...(options.sent.get(chat.thread) ?? []), id]);
    await chat.send(id);
    const answeredAt = await answered(chat, id, reply.sentAt + options.answerTimeoutMs);
    if (answeredAt !== undefined) reply.answeredAt = answeredAt;
    const think = options.thinkMs?.() ?? 0;
    if (think > 0) await new Promise((resolve) => setTimeout(resolve, think));
  }
}

/** When `id` was first seen echoed in the chat, polling until `deadline`. */
async function answered(chat: ClusterChat, id: string, deadline: number): Promise<number | undefined> {
  for (;;) {
    if (echoesIn(chat.replies().slice(-3)).includes(id)) return performance.now();
    if (performance.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The value at quantile `q` (0 to 1) of `values`. */
export function quantile(values: readonly number[], q: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** A row of a bench table. */
export type Row = Record<string, number | string>;

/** The first line of an error for the table; the whole of it is printed (what each instance did and said). */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes('\n')) console.log(`bench/cluster: ${message}`);
  return message.split('\n')[0]!;
}
