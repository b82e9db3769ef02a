/**
 * Tool-call ids that are unique in their conversation. Some endpoints (local
 * servers especially) give several calls of one reply the same id, or none,
 * or reuse an id of an earlier reply; an endpoint then refuses the next
 * request because results cannot be matched to calls. Ids are made unique
 * where replies enter pincer, keeping the model's own id whenever it is. A
 * call's result message answers it by its id.
 */
import { randomBytes } from 'node:crypto';
import type { ChatMessage, ToolCall } from './types.js';

/** A fresh id in the shape OpenAI uses (`call_` and random characters). */
export function newCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}

/** Every tool-call id already used in a conversation. */
export function callIdsOf(messages: readonly ChatMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) ids.add(call.id);
  }
  return ids;
}

/**
 * The calls with unique ids: a call keeps its id unless it is empty, repeats an
 * earlier call of the same reply, or is in `taken`; those get a fresh one.
 * Returns the same array when nothing changed.
 */
export function withUniqueCallIds(calls: ToolCall[], taken: ReadonlySet<string> = new Set()): ToolCall[] {
  // The reply's own ids, next to `taken` rather than in a copy of it (a conversation's ids can be many).
  const used = new Set<string>();
  const isUsed = (id: string): boolean => used.has(id) || taken.has(id);
  let changed = false;
  const result = calls.map((call) => {
    if (call.id && !isUsed(call.id)) {
      used.add(call.id);
      return call;
    }
    changed = true;
    let id = newCallId();
    while (isUsed(id)) id = newCallId();
    used.add(id);
    return { ...call, id };
  });
  return changed ? result : calls;
}

/**
 * {@link withUniqueCallIds} against the ids `messages` already used. The usual
 * reply (no call, or calls with fresh ids of their own) is checked in one pass
 * over the conversation without collecting its ids, and comes back as the same array.
 */
export function withCallIdsUniqueIn(calls: ToolCall[], messages: readonly ChatMessage[]): ToolCall[] {
  if (calls.length === 0 || idsAlreadyUnique(calls, messages)) return calls;
  return withUniqueCallIds(calls, callIdsOf(messages));
}

/** Whether every call has an id, none repeats another of the reply, and none is used in `messages`. */
function idsAlreadyUnique(calls: readonly ToolCall[], messages: readonly ChatMessage[]): boolean {
  const ids = new Set<string>();
  for (const call of calls) {
    if (!call.id || ids.has(call.id)) return false;
    ids.add(call.id);
  }
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    for (const earlier of message.toolCalls) if (ids.has(earlier.id)) return false;
  }
  return true;
}

/** The result message of a tool call. */
export function toolResult(call: ToolCall, content: string): ChatMessage {
  return { role: 'tool', toolCallId: call.id, content };
}
