/**
 * Context compaction: when a history approaches the model's context window,
 * older turns are summarised by the model and the recent ones kept verbatim.
 */
import { IMAGE_TOKEN_ESTIMATE, imagesSent, type ChatMessage, type LlmProvider, type LlmResponse } from '../llm/types.js';

/** Rough token estimate: about four characters per token, plus per-message overhead and a fixed count per image sent. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  let images = 0;
  for (const message of messages) {
    chars += 16 + (message.content?.length ?? 0);
    images += imagesSent(message);
    if (message.role === 'assistant' && message.toolCalls) {
      for (const call of message.toolCalls) chars += call.name.length + call.arguments.length + 16;
    }
  }
  return Math.ceil(chars / 4) + IMAGE_TOKEN_ESTIMATE * images;
}

/** Marks the summary message so a later compaction folds it in again. */
export const SUMMARY_PREFIX = '[Summary of the earlier conversation]\n';

/**
 * Index where the kept tail starts: at least `keep` messages from the end, moved
 * back to a user message so that no tool result loses its assistant call.
 */
export function splitPoint(messages: readonly ChatMessage[], keep: number): number {
  let index = Math.max(0, messages.length - keep);
  while (index > 0 && messages[index]?.role !== 'user') index -= 1;
  return index;
}

/** A compacted history, with the model call that summarised it (for usage accounting). */
export interface Compaction {
  messages: ChatMessage[];
  /** The summary request's response; absent when nothing was old enough to fold. */
  response?: LlmResponse;
}

/**
 * Summarises everything before the kept tail into one message. Returns the
 * history unchanged (and no response) when there is nothing old enough to fold.
 * `provider` is to be a metered one (`meteredProvider`, purpose `compaction`):
 * the summary is then booked, counted and cleaned like every model call.
 */
export async function compactHistory(
  history: ChatMessage[],
  provider: LlmProvider,
  options: { keep: number; signal?: AbortSignal },
): Promise<Compaction> {
  const cut = splitPoint(history, options.keep);
  if (cut <= 1) return { messages: history };
  const older = history.slice(0, cut);
  const transcript = older.map(renderForSummary).join('\n');
  const response = await provider.complete({
    messages: [
      {
        role: 'system',
        content:
          'Summarise the conversation below for your own later reference: the facts learned, what the user asked for, decisions made, tool results that still matter, and open questions. Be concise and concrete. Write plain text.',
      },
      { role: 'user', content: transcript.slice(-200_000) },
    ],
    maxTokens: 1024,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { messages: [{ role: 'user', content: SUMMARY_PREFIX + response.content.trim() }, ...history.slice(cut)], response };
}

function renderForSummary(message: ChatMessage): string {
  switch (message.role) {
    case 'assistant': {
      const calls = message.toolCalls?.map((call) => `[called ${call.name} ${call.arguments.slice(0, 500)}]`).join(' ') ?? '';
      return `assistant: ${message.content ?? ''} ${calls}`.trim();
    }
    case 'tool':
      return `tool result: ${message.content.slice(0, 2000)}`;
    default:
      return `${message.role}: ${message.content}`;
  }
}
