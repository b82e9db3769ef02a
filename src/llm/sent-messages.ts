/**
 * The conversation as it goes on the wire, redacted, kept per message. Every
 * request re-sends the whole history; redacting each earlier message again
 * made the cost of a model call grow with the conversation.
 * A message is converted once and its wire form reused for as long as the
 * message object still holds what it held then (messages are not edited in
 * place, but if one is, it is converted again).
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { redactMessage } from './redact-messages.js';
import type { ChatMessage, ImagePart, ToolCall } from './types.js';
import { toWireMessage } from './wire.js';

/** A message's wire form, and a copy of the fields it was made from. */
interface Sent {
  source: ChatMessage;
  wire: ChatCompletionMessageParam;
}

/**
 * Wire forms of messages, for one redactor. `redact` must give the same text for
 * the same input (the app's redactor does: its secrets are fixed at start).
 * Without a redactor nothing is kept: the conversion alone is cheaper than the lookup.
 *
 * @example
 * const sent = new SentMessages((text) => redactor.redact(text));
 * const body = { model, messages: sent.of(request.messages) };
 */
export class SentMessages {
  private readonly sent = new WeakMap<ChatMessage, Sent>();

  constructor(private readonly redact?: (text: string) => string) {}

  /** The messages redacted and in the wire format, in order. */
  of(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
    // Without redaction, converting a message costs less than looking it up.
    if (!this.redact) return messages.map(toWireMessage);
    return messages.map((message) => this.one(message));
  }

  private one(message: ChatMessage): ChatCompletionMessageParam {
    const kept = this.sent.get(message);
    if (kept && sameFields(kept.source, message)) return kept.wire;
    const wire = toWireMessage(this.redact ? redactMessage(message, this.redact) : message);
    this.sent.set(message, { source: copyFields(message), wire });
    return wire;
  }
}

/** The fields {@link toWireMessage} and redaction read, copied (tool calls included). */
function copyFields(message: ChatMessage): ChatMessage {
  if (message.role === 'assistant' && message.toolCalls) return { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call })) };
  if (message.role === 'user' && message.images) return { ...message, images: message.images.map((image) => ({ ...image })) };
  return { ...message };
}

/** Whether `message` still holds what `source` recorded, in every field that reaches the wire. */
function sameFields(source: ChatMessage, message: ChatMessage): boolean {
  if (source.role !== message.role || source.content !== message.content) return false;
  switch (message.role) {
    case 'system':
      return true;
    case 'user':
      return (source as typeof message).name === message.name && sameImages((source as typeof message).images, message.images);
    case 'tool':
      return (source as typeof message).toolCallId === message.toolCallId;
    case 'assistant':
      return sameCalls((source as typeof message).toolCalls, message.toolCalls);
  }
}

function sameImages(source: readonly ImagePart[] | undefined, images: readonly ImagePart[] | undefined): boolean {
  if (!source || !images) return source === images;
  if (source.length !== images.length) return false;
  // A cached image keeps the same data URL string, which compares at once.
  return images.every((image, index) => image.path === source[index]!.path && image.dataUrl === source[index]!.dataUrl);
}

function sameCalls(source: readonly ToolCall[] | undefined, calls: readonly ToolCall[] | undefined): boolean {
  if (!source || !calls) return source === calls;
  if (source.length !== calls.length) return false;
  return calls.every((call, index) => {
    const recorded = source[index]!;
    return recorded.id === call.id && recorded.name === call.name && recorded.arguments === call.arguments;
  });
}
