/**
 * What happens to a model's reply before the loop acts on it: reasoning and
 * tool markup are cleaned away, tool calls written as text are turned into real
 * calls, and a reply with nothing left to say becomes a fallback sentence that
 * is flagged so the caller can log it.
 */
import { cleanReply, stripReasoning } from '../llm/clean-output.js';
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
 * Prepares a model reply for the loop, which applies it to every reply a
 * delegate's `callLlm` returns; `knownToolNames` are the tools that call offered.
 * - With structured tool calls: the accompanying text is cleaned, nothing else changes.
 * - With calls written as text for known tools: they become the reply's tool calls,
 *   the finish reason becomes `tool_calls` and the remaining text is cleaned.
 * - Otherwise the text is cleaned; if nothing is left it becomes
 *   {@link EMPTY_REPLY_FALLBACK} with the anomaly `empty_reply`.
 */
export function finalizeReply(response: LlmResponse, knownToolNames: Iterable<string>): FinalizedReply {
  if (response.toolCalls.length > 0) return { response: { ...response, content: cleanReply(response.content) } };
  // Calls a model only considered inside its reasoning are not calls.
  const recovered = recoverToolCalls(stripReasoning(response.content), knownToolNames);
  if (recovered.calls.length > 0) {
    const content = cleanReply(recovered.remainingText);
    return { response: { ...response, content, toolCalls: recovered.calls, finishReason: 'tool_calls' } };
  }
  const content = cleanReply(response.content);
  if (content) return { response: { ...response, content } };
  return { response: { ...response, content: EMPTY_REPLY_FALLBACK }, anomaly: 'empty_reply' };
}
