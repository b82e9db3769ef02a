/**
 * Messages the bot sends of its own accord that must arrive once: a job's
 * status and result, a reminder, a restart notice. Each is named for what it
 * is (`job:<id>:result`, `routine:<id>:<firing>`), and the outbox posts a name
 * once (Outbox.deliver, on the DeliveryLog that also keeps chat answers'
 * parts). A result or a reminder is also written into the history of the
 * conversation it went to, as what the bot said, so that the model of the next
 * turn there knows it ("what did the job find?").
 */
import { threadKeyOf, type ChatAddress, type ChatInfo, type SentMessage } from '../channels/types.js';
import type { ChatMessage } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { ThreadHistory, ThreadRecord } from './history.js';
import type { Outbox } from './outbox.js';

/** How many names of delivered messages a thread remembers (a message is sent again soon, if at all). */
const REMEMBERED_NAMES = 50;

/** A message that must arrive once. */
export interface NamedMessage {
  /** Stable, from what it is: sending the same name again posts nothing. */
  name: string;
  /** The conversation it goes to. */
  chat: ChatInfo;
  text: string;
  /** Written into the conversation's history as what the bot said. */
  remembered?: boolean;
}

/** What a delivery needs of the services. */
export interface DeliveryServices {
  outbox: Outbox;
  history: ThreadHistory;
  log: Logger;
}

/**
 * Sends a named message once and, when it is `remembered`, writes it once
 * into its conversation's history first. Resolves with the message (the earlier one
 * when it had gone out before), or undefined when it could not be posted.
 */
export async function deliver(services: DeliveryServices, message: NamedMessage): Promise<SentMessage | undefined> {
  // In the history before it is posted: a person who reads it and asks about it at once is answered knowing it.
  if (message.remembered) await remember(services, message);
  return services.outbox.deliver(addressOf(message.chat), message.text, message.name);
}

/** The address of a conversation, without what describes it. */
export function addressOf(chat: ChatAddress): ChatAddress {
  return chat.subId ? { channel: chat.channel, chatId: chat.chatId, subId: chat.subId } : { channel: chat.channel, chatId: chat.chatId };
}

async function remember(services: DeliveryServices, message: NamedMessage): Promise<void> {
  const text = services.outbox.redact(message.text);
  try {
    await services.history.update(threadKeyOf(message.chat), message.chat, (record) => noteSaid(record, message.name, text));
  } catch (error) {
    services.log.warn({ err: error, name: message.name }, 'a delivered message not written into its conversation');
  }
}

/**
 * Writes what the bot said into a thread, once per name: at the end of its
 * messages, or, while a turn is open (it replaces the messages when it ends)
 * or calls wait for their results, kept for the next turn's start.
 */
export function noteSaid(record: ThreadRecord, name: string, text: string): void {
  if (record.delivered?.includes(name)) return;
  record.delivered = [...(record.delivered ?? []), name].slice(-REMEMBERED_NAMES);
  const last = record.messages.at(-1);
  const awaitsResults = last?.role === 'assistant' && Boolean(last.toolCalls?.length);
  if (record.turn || awaitsResults) (record.said ??= []).push(text);
  else record.messages.push({ role: 'assistant', content: text });
}

/** What the bot said outside turns and not yet in the history, taken out of the record: a starting turn puts it before its messages. */
export function takeSaid(record: ThreadRecord): ChatMessage[] {
  const said = record.said ?? [];
  delete record.said;
  return said.map((content) => ({ role: 'assistant', content }));
}
