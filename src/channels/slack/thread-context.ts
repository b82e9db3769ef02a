/**
 * Context for threads that an @mention starts. On Slack the bot answers in the
 * thread of the message that addressed it, so that thread is a new
 * conversation, while the talk that led to the mention happened at the top
 * level of the channel. The recent unaddressed top-level messages are kept
 * here and handed to the new thread (as unaddressed messages, which the agent
 * keeps as context) just before the mention itself.
 */
import type { InboundMessage } from '../types.js';

/** Recent unaddressed top-level messages, per channel. */
export class ThreadContext {
  private readonly recent = new Map<string, InboundMessage[]>();

  /** @param limit messages kept per channel; 0 turns the hand-over off */
  constructor(private readonly limit: number) {}

  /** Keeps an unaddressed top-level channel message. */
  remember(message: InboundMessage): void {
    if (this.limit === 0) return;
    const list = this.recent.get(message.chat.chatId) ?? [];
    list.push(message);
    if (list.length > this.limit) list.splice(0, list.length - this.limit);
    this.recent.set(message.chat.chatId, list);
  }

  /** The kept messages of `channelId`, addressed to the thread `subId`, oldest first. */
  handOver(channelId: string, subId: string): InboundMessage[] {
    return (this.recent.get(channelId) ?? []).map((message) => ({ ...message, chat: { ...message.chat, subId } }));
  }
}
