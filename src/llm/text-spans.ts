/**
 * Ranges of a model's text: where its markdown code is (so that tags a model
 * writes inside code are left alone) and how to cut ranges out without leaving
 * piles of blank lines behind.
 */
import { matchesOf } from './matches.js';

/** A half-open range `[start, end)` of a string. */
export interface Span {
  start: number;
  end: number;
}

/** A fenced code block, with the info string after its opening fence (`json`, `ts`, ...). */
export interface FencedBlock extends Span {
  info: string;
  /** The text between the fences. */
  body: string;
}

const OPENING_FENCE = /^ {0,3}(`{3,}|~{3,})([^`\n]*)$/;

/** Fenced blocks, in order; an unclosed fence runs to the end, as markdown renders it. */
export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: { start: number; bodyStart: number; fence: string; info: string } | undefined;
  let offset = 0;
  for (const line of text.split('\n')) {
    const lineEnd = offset + line.length;
    if (!open) {
      const match = OPENING_FENCE.exec(line);
      if (match) open = { start: offset, bodyStart: Math.min(lineEnd + 1, text.length), fence: match[1]!, info: match[2]!.trim() };
    } else if (closesFence(line, open.fence)) {
      blocks.push({ start: open.start, end: lineEnd, info: open.info, body: text.slice(open.bodyStart, offset) });
      open = undefined;
    }
    offset = lineEnd + 1;
  }
  if (open) blocks.push({ start: open.start, end: text.length, info: open.info, body: text.slice(open.bodyStart) });
  return blocks;
}

const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** A closing fence uses the opening fence's character, at least as many times. */
function closesFence(line: string, fence: string): boolean {
  const marker = CLOSING_FENCE.exec(line)?.[1];
  return marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length;
}

const INLINE_CODE = /(`+)(?!`)([^\n]+?)(?<!`)\1(?!`)/g;

/** Every code region: fenced blocks and inline code spans. */
export function codeSpans(text: string): Span[] {
  const fenced: Span[] = fencedBlocks(text);
  const inline: Span[] = [];
  for (const match of matchesOf(INLINE_CODE, text)) {
    const start = match.index;
    if (!isInside(fenced, start)) inline.push({ start, end: start + match[0].length });
  }
  return [...fenced, ...inline].sort((a, b) => a.start - b.start);
}

/** Whether `index` falls inside one of `spans`. */
export function isInside(spans: readonly Span[], index: number): boolean {
  return spans.some((span) => index >= span.start && index < span.end);
}

/** The text with every code region replaced by `replacement`. */
export function withoutCode(text: string, replacement = ' '): string {
  return removeSpans(text, codeSpans(text), () => replacement);
}

/**
 * Cuts `spans` (sorted, not overlapping) out of `text`. By default the
 * whitespace around each cut is merged into at most one blank line, so
 * removing a block between two paragraphs leaves two paragraphs.
 */
export function removeSpans(text: string, spans: readonly Span[], replace?: (span: Span) => string): string {
  let result = text;
  for (const span of [...spans].sort((a, b) => b.start - a.start)) {
    const before = result.slice(0, span.start);
    const after = result.slice(span.end);
    result = replace ? before + replace(span) + after : joinAround(before, after);
  }
  return result;
}

function joinAround(before: string, after: string): string {
  const left = before.replace(/\s+$/, '');
  const right = after.replace(/^\s+/, '');
  if (!left || !right) return left + right;
  const gap = before.slice(left.length) + after.slice(0, after.length - right.length);
  const newlines = gap.split('\n').length - 1;
  const separator = newlines >= 2 ? '\n\n' : newlines === 1 ? '\n' : gap ? ' ' : '';
  return left + separator + right;
}
