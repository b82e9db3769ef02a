/**
 * Discord markdown needs no conversion: the agent's markdown (already redacted
 * by the agent's outbox) is sent as is, split into parts Discord accepts.
 */
import { splitMessage } from '../split.js';

/** Longest message content Discord accepts, in characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** Shown instead of an empty text, which Discord rejects. */
export const EMPTY_TEXT = '…';

/**
 * The parts of `text` as Discord messages: at most 2,000 characters each, cut
 * at paragraph or line boundaries and never inside a code block.
 */
export function renderParts(text: string): string[] {
  if (!text.trim()) return [EMPTY_TEXT];
  return splitMessage(text, DISCORD_MESSAGE_LIMIT);
}
