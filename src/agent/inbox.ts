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
