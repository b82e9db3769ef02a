/**
 * Redaction of what is sent to the model. The conversation carries text that
 * never passed the outbox: the user's own messages, the model's earlier
 * replies as it wrote them, the arguments of its tool calls. A credential in
 * any of them would otherwise go back to the model endpoint on every request.
 */
import type { ChatMessage } from './types.js';

/**
 * `messages` with `redact` applied to every text the model reads (contents and
 * tool-call arguments). Ids, names and roles are kept: the model endpoint
 * checks that tool results answer the calls by id.
 *
 * @example
 * const sent = redactMessages(request.messages, (text) => redactor.redact(text));
 */
export function redactMessages(messages: readonly ChatMessage[], redact: (text: string) => string): ChatMessage[] {
  return messages.map((message) => redactMessage(message, redact));
}

/** One message with `redact` applied to its texts, as {@link redactMessages} does to each. */
export function redactMessage(message: ChatMessage, redact: (text: string) => string): ChatMessage {
  // A user message's images are bytes, not text: they go as they are (the line naming each is in its content).
  if (message.role !== 'assistant') return { ...message, content: redact(message.content) };
  const content = message.content === null ? null : redact(message.content);
  if (!message.toolCalls) return { ...message, content };
  return { ...message, content, toolCalls: message.toolCalls.map((call) => ({ ...call, arguments: redact(call.arguments) })) };
}
