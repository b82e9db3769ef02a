/**
 * Cleaning a model's text before a person reads it: reasoning blocks
 * (`<think>`, `<thinking>`, `<|thinking|>` ...) and tool-call markup that a
 * model printed instead of calling a tool are removed. Tags inside markdown
 * code are content, not markup, and stay.
 */
import { matchesOf } from './matches.js';
import { codeSpans, isInside, removeSpans, type Span } from './text-spans.js';

/** A tag found in the text, and whether it opens a block, closes one or stands alone. */
interface TagToken extends Span {
  role: 'open' | 'close' | 'inner';
}

const REASONING_NAMES = 'think|thinking|thought|thoughts|reasoning';

/** `<think>`, `</thinking>`, `<|thinking|>`, `<|end_of_thought|>` and the like. */
const REASONING_TAG = new RegExp(
  `<\\s*(\\/)?\\s*(?:${REASONING_NAMES})(?=[\\s>])[^>]*>|<\\|\\s*(\\/|end_of_|end_|begin_of_|start_of_|begin_|start_)?(?:${REASONING_NAMES})\\s*\\|>`,
  'gi',
);

/**
 * Tool-call markup of the common open models: `<tool_call>`, `<function=name>`,
 * `<parameter=x>`, special tokens such as `<|tool_call|>`, `<|python_tag|>` or
 * DeepSeek's full-width `<｜tool▁calls▁begin｜>`, and Mistral's `[TOOL_CALLS]`.
 */
const TOOL_TAG =
  /<\s*\/?\s*(?:tool_calls?|function_calls?|tool_use)\s*>|<\s*\/?\s*(?:function|parameter)(?:=[^>\n]*)?\s*>|<[|｜][^|｜<>\n]*(?:tool|python_tag)[^|｜<>\n]*[|｜]>|\[\/?(?:TOOL_CALLS|ARGS|CALL_ID)\]/gi;

/** The patterns that find the tags a reply is cleaned of (bench/patterns times how they are run). */
export const CLEANING_PATTERNS: readonly RegExp[] = [REASONING_TAG, TOOL_TAG];

/** Removes reasoning blocks: closed, nested, an unclosed one at the end, or a leading one whose opening tag is missing. */
export function stripReasoning(text: string): string {
  // Every reasoning tag starts with `<`; most replies (and every empty one) have none.
  if (!text.includes('<')) return text;
  const tokens = findTags(text, REASONING_TAG, reasoningRole);
  return removeSpans(text, blockSpans(tokens, text.length, true));
}

/**
 * Removes tool-call markup: whole `<tool_call>...</tool_call>`-style blocks,
 * stray closing tags, and everything after an opening tag that is never closed
 * (what follows it is call syntax, not prose).
 */
export function stripToolMarkup(text: string): string {
  // Every tool tag starts with `<` or `[`.
  if (!text.includes('<') && !text.includes('[')) return text;
  const tokens = findTags(text, TOOL_TAG, toolRole);
  return removeSpans(text, blockSpans(tokens, text.length, false));
}

/**
 * The reply as a person should see it: reasoning and tool markup removed,
 * surrounding whitespace trimmed. May return an empty string.
 *
 * @example
 * cleanReply('<think>user wants a greeting</think>Hello!') // 'Hello!'
 */
export function cleanReply(text: string): string {
  return stripToolMarkup(stripReasoning(text)).trim();
}

function findTags(text: string, pattern: RegExp, role: (tag: string, match: RegExpMatchArray) => TagToken['role']): TagToken[] {
  const code = codeSpans(text);
  const tokens: TagToken[] = [];
  for (const match of matchesOf(pattern, text)) {
    if (isInside(code, match.index)) continue;
    tokens.push({ start: match.index, end: match.index + match[0].length, role: role(match[0], match) });
  }
  return tokens;
}

function reasoningRole(_tag: string, match: RegExpMatchArray): TagToken['role'] {
  const prefix = match[1] ?? match[2] ?? '';
  return prefix === '/' || prefix.startsWith('end') ? 'close' : 'open';
}

function toolRole(tag: string): TagToken['role'] {
  const inner = tag.replace(/^[<[][|｜]?\s*|\s*[|｜]?[>\]]$/g, '').toLowerCase();
  // Parameters and argument markers live inside a call; they never open or close one.
  if (/^\/?\s*parameter\b|^(args|call_id)$|argument/.test(inner)) return 'inner';
  if (inner.startsWith('/')) return 'close';
  // Checked before `end`, which a tool name such as `append_file` may contain.
  if (inner.startsWith('function=')) return 'open';
  if (/end/.test(inner)) return 'close';
  if (/begin|start|python_tag|^(tool_calls?|function_calls?|tool_use)$/.test(inner)) return 'open';
  return 'inner';
}

/**
 * The spans to remove for a sequence of tags: each outermost open..close block;
 * an open block still unclosed at the end runs to the end; a close without an
 * open is removed alone, or with everything before it when it is the first tag
 * and `leadingOrphanCloses` (a reasoning block whose opening tag the chat
 * template swallowed).
 */
function blockSpans(tokens: TagToken[], textLength: number, leadingOrphanCloses: boolean): Span[] {
  const spans: Span[] = [];
  let depth = 0;
  let blockStart = 0;
  tokens.forEach((token, index) => {
    if (token.role === 'open') {
      if (depth === 0) blockStart = token.start;
      depth += 1;
    } else if (token.role === 'close' && depth > 0) {
      depth -= 1;
      if (depth === 0) spans.push({ start: blockStart, end: token.end });
    } else if (depth === 0) {
      const fromStart = token.role === 'close' && index === 0 && leadingOrphanCloses;
      spans.push({ start: fromStart ? 0 : token.start, end: token.end });
    }
  });
  if (depth > 0) spans.push({ start: blockStart, end: textLength });
  return spans;
}
