/**
 * Cuts a markdown answer into Telegram messages: split the markdown (never
 * inside a code block), render each part to HTML, and split a part again,
 * smaller, when its HTML still exceeds the limit (escapes and tags add length).
 */
import { splitMessage } from '../split.js';
import { escapeHtml } from './escape.js';
import { TELEGRAM_MESSAGE_LIMIT } from './message-limit.js';
import { markdownToTelegramHtml } from './render.js';

/** Share of the limit used for the first markdown split, leaving room for markup. */
const FIRST_SPLIT_SHARE = 0.92;
/** The smallest markdown part splitMessage accepts. */
const MIN_SPLIT = 20;
/** Shown instead of a message that would be empty, which Telegram rejects. */
const EMPTY_PLACEHOLDER = '…';

/** One Telegram message: its HTML and the markdown it came from (the plain-text fallback). */
export interface MessagePart {
  markdown: string;
  html: string;
}

/**
 * The parts of `markdown`, each with HTML of at most `limit` characters and
 * markdown of at most `limit` characters.
 */
export function renderParts(markdown: string, limit = TELEGRAM_MESSAGE_LIMIT): MessagePart[] {
  const text = markdown.trim() ? markdown : EMPTY_PLACEHOLDER;
  const first = Math.floor(limit * FIRST_SPLIT_SHARE);
  return splitMessage(text, first).flatMap((part) => fit(part, limit));
}

function fit(markdown: string, limit: number): MessagePart[] {
  const html = markdownToTelegramHtml(markdown) || escapeHtml(markdown.trim()) || EMPTY_PLACEHOLDER;
  if (html.length <= limit) return [{ markdown, html }];
  if (markdown.length <= MIN_SPLIT) return [{ markdown, html: escapeHtml(markdown) }];
  // Shrink in proportion to how much rendering grew this part, with some slack.
  const smaller = Math.max(MIN_SPLIT, Math.min(markdown.length - 1, Math.floor((markdown.length * limit * 0.9) / html.length)));
  return splitMessage(markdown, smaller).flatMap((part) => fit(part, limit));
}
