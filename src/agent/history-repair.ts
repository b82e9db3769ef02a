/**
 * Keeps a conversation well formed for the model: every tool call of an
 * assistant message is followed, before anything else, by exactly one result.
 * Chat platforms deliver presses and messages in any order; this is the last
 * line of defence against a history the model's API would reject.
 */
import type { ChatMessage } from '../llm/types.js';

/** Result of a call whose real result never arrived. */
export const MISSING_RESULT = 'Not run: this call was interrupted before it could run.';

/**
 * A copy of `messages` in which each assistant message with tool calls is
 * directly followed by one result per call: results found later are moved up,
 * duplicates dropped (a real result wins over {@link MISSING_RESULT}), missing
 * ones filled in, and results for calls that do not exist dropped. Returns the
 * same array when nothing needed repair.
 */
export function repairHistory(messages: ChatMessage[]): ChatMessage[] {
  const results = collectResults(messages);
  const repaired: ChatMessage[] = [];
  let changed = false;
  let expected: string[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      const fits = expected[0] === message.toolCallId && results.get(message.toolCallId) === message;
      if (fits) {
        expected.shift();
        repaired.push(message);
      } else changed = true;
      continue;
    }
    if (expected.length) {
      changed = true;
      repaired.push(...expected.map((id) => results.get(id) ?? missing(id)));
      expected = [];
    }
    repaired.push(message);
    if (message.role === 'assistant' && message.toolCalls?.length) expected = message.toolCalls.map((call) => call.id);
  }
  if (expected.length) {
    // A batch still running (or waiting for approval) at the end is left open.
    const found = expected.filter((id) => results.has(id));
    if (found.length) changed = true;
    repaired.push(...found.map((id) => results.get(id)!));
  }
  return changed ? repaired : messages;
}

function collectResults(messages: ChatMessage[]): Map<string, Extract<ChatMessage, { role: 'tool' }>> {
  const calls = new Set(messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])));
  const results = new Map<string, Extract<ChatMessage, { role: 'tool' }>>();
  for (const message of messages) {
    if (message.role !== 'tool' || !calls.has(message.toolCallId)) continue;
    const known = results.get(message.toolCallId);
    if (!known || (known.content === MISSING_RESULT && message.content !== MISSING_RESULT)) results.set(message.toolCallId, message);
  }
  return results;
}

function missing(toolCallId: string): ChatMessage {
  return { role: 'tool', toolCallId, content: MISSING_RESULT };
}
