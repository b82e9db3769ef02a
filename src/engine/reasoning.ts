/**
 * What happens to a model's reply before the loop acts on it: reasoning and
 * tool markup are cleaned away, tool calls written as text are turned into real
 * calls, and a reply with nothing left to say becomes a fallback sentence that
 * is flagged so the caller can log it.
 */
import { cleanReply, stripReasoning, stripToolMarkup } from '../llm/clean-output.js';
import { recoverToolCalls } from '../llm/text-tool-calls.js';
import type { LlmResponse } from '../llm/types.js';

export { cleanReply } from '../llm/clean-output.js';
export { recoverToolCalls, type RecoveredToolCalls } from '../llm/text-tool-calls.js';

/** What the user reads when the model's reply was empty after cleaning. */
export const EMPTY_REPLY_FALLBACK = 'I could not produce an answer this time. Please try rephrasing your message.';

/** Something odd about a reply, worth a log line: `empty_reply` when the fallback was used. */
export type ReplyAnomaly = 'empty_reply';

/** A reply ready for the loop. */
export interface FinalizedReply {
  response: LlmResponse;
  anomaly?: ReplyAnomaly;
}

/**
 * A model reply as every consumer reads it (`meteredCall` returns it so):
 * reasoning and tool markup removed, and calls written as text for one of
 * `knownToolNames` (the tools the request offered) made real calls, with the
 * finish reason `tool_calls`. The text keeps its surrounding whitespace: a
 * reply the output limit cut may go on in a continuation that starts between
 * two words; the loop trims what it shows ({@link finalizeReply}).
 */
export function cleanResponse(response: LlmResponse, knownToolNames: Iterable<string>): LlmResponse {
  if (response.toolCalls.length > 0) return { ...response, content: cleanText(response.content) };
  // Calls a model only considered inside its reasoning are not calls.
  const recovered = recoverToolCalls(stripReasoning(response.content), knownToolNames);
  if (recovered.calls.length > 0) {
    return { ...response, content: cleanReply(recovered.remainingText), toolCalls: recovered.calls, finishReason: 'tool_calls' };
  }
  return { ...response, content: cleanText(response.content) };
}

/**
 * Prepares a model reply for the loop, which applies it to every reply a
 * delegate's `callLlm` returns; `knownToolNames` are the tools that call offered.
 * The reply is cleaned as {@link cleanResponse} does (again, for a delegate that
 * did not call the model through `meteredCall`) and trimmed; a text reply
 * with nothing left becomes {@link EMPTY_REPLY_FALLBACK} with the anomaly
 * `empty_reply`.
 */
export function finalizeReply(response: LlmResponse, knownToolNames: Iterable<string>): FinalizedReply {
  const cleaned = cleanResponse(response, knownToolNames);
  const content = cleaned.content.trim();
  if (content || cleaned.toolCalls.length > 0) return { response: { ...cleaned, content } };
  return { response: { ...cleaned, content: EMPTY_REPLY_FALLBACK }, anomaly: 'empty_reply' };
}

/** Text without reasoning or tool markup, its edges kept. */
function cleanText(text: string): string {
  return stripToolMarkup(stripReasoning(text));
}
