/**
 * A thread's inbox: people's messages accepted and not yet in the history,
 * kept in the thread's record so that a crash or a shutdown loses none.
 */
import type { ChatInfo, InboundMessage } from '../channels/types.js';
import type { QueuedMessage, ThreadRecord } from './history.js';
import type { AgentServices } from './services.js';

/** The stable id of an accepted message (the platform id with its arrival time). */
export function inboxId(message: InboundMessage): string {
  return `${message.messageId}@${message.receivedAt}`;
}

/**
 * Where a message stands in its chat, as a string that sorts like the
 * platform's own order: Telegram's `message_id` and Discord's snowflake are
 * integers that grow, Slack's `ts` is seconds and microseconds. Digits only and
 * of one width, so that strings compare as the platform's ids would. Undefined
 * for an id that is not a number (the entry then keeps its arrival order).
 *
 * Messages can arrive in another order than written: Slack sends one again,
 * to another connection, when it was not acknowledged in time, and several
 * instances each receive some of one chat's messages.
 */
export function platformOrder(messageId: string): string | undefined {
  const match = /^(\d{1,20})(?:\.(\d{1,6}))?$/.exec(messageId);
  if (!match) return undefined;
  return match[1]!.padStart(20, '0') + (match[2] ?? '').padEnd(6, '0');
}

/**
 * The inbox order rule, the one place it is written: `message` goes into
 * `waiting` (messages not read yet) after those written before it, but never
 * before one without an order; one without an order goes last.
 */
export function insertInOrder(waiting: InboundMessage[], message: InboundMessage): void {
  waiting.splice(placeOf(waiting, message.messageId, (other) => other.messageId), 0, message);
}

/**
 * Messages kept in arrival order (a shared inbox, where every instance only
 * appends), in the order the thread reads them: each placed by {@link insertInOrder}'s rule as it arrived.
 */
export function inChatOrder<T>(arrivals: readonly T[], messageIdOf: (item: T) => string): T[] {
  const ordered: T[] = [];
  for (const item of arrivals) ordered.splice(placeOf(ordered, messageIdOf(item), messageIdOf), 0, item);
  return ordered;
}

/** Where the message `messageId` goes in `waiting` (see {@link insertInOrder}); walks back only over the later ones at the tail (usually none). */
function placeOf<T>(waiting: readonly T[], messageId: string, messageIdOf: (item: T) => string): number {
  const order = platformOrder(messageId);
  let at = waiting.length;
  while (order !== undefined && at > 0) {
    const other = platformOrder(messageIdOf(waiting[at - 1]!));
    if (other === undefined || other <= order) break;
    at -= 1;
  }
  return at;
}

/** The stored form of an accepted message. */
export function toQueued(message: InboundMessage): QueuedMessage {
  const { sender } = message;
  return {
    id: inboxId(message),
    messageId: message.messageId,
    sender: sender.isBot === undefined ? { id: sender.id, name: sender.name } : { id: sender.id, name: sender.name, isBot: sender.isBot },
    text: message.text,
    receivedAt: message.receivedAt,
    mentionsBot: message.mentionsBot,
    replyToBot: message.replyToBot,
    attachments: message.attachments.map((a) => ({ ...a })),
  };
}

/** An accepted message again, as it arrived, in `chat`. */
export function fromQueued(queued: QueuedMessage, chat: ChatInfo): InboundMessage {
  return {
    type: 'message',
    chat,
    sender: queued.sender,
    receivedAt: queued.receivedAt,
    messageId: queued.messageId,
    text: queued.text,
    mentionsBot: queued.mentionsBot,
    replyToBot: queued.replyToBot,
    attachments: queued.attachments,
  };
}

/**
 * Keeps an accepted message in its thread's inbox and marks the thread as
 * having unfinished work, so that a restart finds it. The write goes on in the
 * background, in order with the thread's other writes.
 */
export function keepInInbox(services: Pick<AgentServices, 'history' | 'journal'>, key: string, message: InboundMessage): Promise<ThreadRecord> {
  services.journal.mark(key);
  return services.history.update(key, message.chat, (record) => record.inbox.push(toQueued(message)), { wait: false });
}
