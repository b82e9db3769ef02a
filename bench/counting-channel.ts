/**
 * A bare in-process channel for benchmarks: it delivers injected messages and
 * counts the messages sent that a filter picks (every one by default), keeping
 * nothing, so that its own memory does not grow with the run (the test
 * platform records every event and message). A waiter is told once a count is
 * reached, without polling.
 */
import { EventQueue } from '../src/channels/event-queue.js';
import type { Channel, ChannelCapabilities, ChatAddress, InboundEvent, SentMessage } from '../src/channels/types.js';

/** A channel that counts what is sent to it; see the module comment. */
export class CountingChannel implements Channel {
  readonly name = 'bench';
  readonly capabilities: ChannelCapabilities = { maxMessageLength: 4000, minEditIntervalMs: 1000, typingIntervalMs: 0 };
  /** Messages sent that `counts` picked. */
  counted = 0;
  private sent = 0;
  private readonly queue = new EventQueue<InboundEvent>();
  private waiter: { count: number; resolve: () => void } | undefined;

  /** @param counts which sent texts count (default: all) */
  constructor(private readonly counts: (text: string) => boolean = () => true) {}

  async start(): Promise<void> {}
  async stop(): Promise<void> {
    this.queue.close();
  }
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }
  async send(chat: ChatAddress, text: string): Promise<SentMessage> {
    this.sent += 1;
    if (this.counts(text)) {
      this.counted += 1;
      if (this.waiter && this.counted >= this.waiter.count) this.waiter.resolve();
    }
    return { chat, ids: [String(this.sent)] };
  }
  async edit(message: SentMessage): Promise<SentMessage> {
    return message;
  }
  async typing(): Promise<void> {}
  async sendApproval(chat: ChatAddress): Promise<SentMessage> {
    return { chat, ids: ['0'] };
  }
  async resolveApproval(): Promise<void> {}
  async isAdmin(): Promise<boolean> {
    return false;
  }

  /** User `thread` writes in their own DM. */
  write(thread: number): void {
    const id = `u${thread}`;
    this.queue.push({
      type: 'message',
      chat: { channel: this.name, chatId: `dm-${id}`, kind: 'dm', scope: 'global' },
      sender: { id, name: `User ${thread}` },
      receivedAt: Date.now(),
      messageId: `m${thread}`,
      text: `hello from thread ${thread}`,
      mentionsBot: true,
      replyToBot: false,
      attachments: [],
    });
  }

  /** Resolves once `count` counted messages have been sent. */
  reached(count: number): Promise<void> {
    if (this.counted >= count) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = { count, resolve }));
  }
}
