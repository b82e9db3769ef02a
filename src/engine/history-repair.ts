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
 * same array when nothing needed repair. Tool-call ids are made unique first
 * ({@link uniqueCallIds}).
 */
export function repairHistory(messages: ChatMessage[]): ChatMessage[] {
  return pairResults(uniqueCallIds(messages));
}

/**
 * A copy of `messages` in which no two tool calls share an id (histories
 * stored before ids were made unique at the provider may hold duplicates,
 * which endpoints refuse). A repeated id is renamed in its assistant message
 * and in the results that follow it, up to the next assistant message, in
 * order: the n-th result carrying the id answers the n-th call that had it.
 * Returns the same array when every id was unique.
 */
export function uniqueCallIds(messages: ChatMessage[]): ChatMessage[] {
  const seen = new Set<string>();
  const out: ChatMessage[] = [];
  let renames = new Map<string, string[]>();
  let changed = false;
  for (const message of messages) {
    if (message.role === 'assistant') {
      renames = new Map();
      if (message.toolCalls?.length) {
        const calls = message.toolCalls.map((call) => {
          let id = call.id;
          if (seen.has(id) || !id) {
            id = freshId(call.id, seen);
            changed = true;
          }
          seen.add(id);
          renames.set(call.id, [...(renames.get(call.id) ?? []), id]);
          return id === call.id ? call : { ...call, id };
        });
        out.push(calls.every((call, i) => call === message.toolCalls![i]) ? message : { ...message, toolCalls: calls });
        continue;
      }
    }
    if (message.role === 'tool') {
      const id = renames.get(message.toolCallId)?.shift();
      if (id !== undefined && id !== message.toolCallId) {
        out.push({ ...message, toolCallId: id });
        continue;
      }
    }
    out.push(message);
  }
  return changed ? out : messages;
}

function freshId(base: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const id = `${base || 'call'}_${n}`;
    if (!taken.has(id)) return id;
  }
}

function pairResults(messages: ChatMessage[]): ChatMessage[] {
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
