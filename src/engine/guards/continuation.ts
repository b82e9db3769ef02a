/**
 * Continuing a text reply that the output limit cut (seed 002): the model is
 * asked to go on, and the pieces are joined without the part the model wrote
 * twice (it often restarts the last sentence, line or paragraph).
 */
import { fencedBlocks } from '../../llm/text-spans.js';

/** The request to continue, sent as a user message. */
export const CONTINUE_PROMPT =
  'Your reply was cut off by the length limit. Continue exactly where it stopped, even in the middle of a word or a code block: do not repeat what you already wrote and do not start over.';

/** The longest overlap looked for, in characters (about a long paragraph). */
const MAX_OVERLAP = 4_000;
/** Overlaps shorter than this are taken for chance. */
const MIN_OVERLAP = 4;
/** Overlaps at least this long are accepted even when they start inside a word. */
const SURE_OVERLAP = 20;

/**
 * Joins `previous` and its continuation `next`, dropping the start of `next`
 * that repeats the end of `previous`. Whitespace is compared loosely (a line
 * break repeated as a space still overlaps); without an overlap the pieces are
 * joined as they are, since the cut can fall inside a word.
 *
 * @example
 * stitch('The answer ends', 'answer ends here.') // 'The answer ends here.'
 * stitch('The ans', 'wer is 42.') // 'The answer is 42.'
 */
export function stitch(previous: string, next: string): string {
  if (!next.trim()) return previous;
  if (!previous.trim()) return next;
  const fence = openFence(previous);
  const rest = fence ? withoutReopenedFence(next, fence) : next;
  const seam = overlapEnd(previous, rest);
  return seam === undefined ? previous + rest : previous.trimEnd() + rest.slice(seam);
}

/**
 * Where the repeated part of `next` ends (an index into `next`), when its
 * start repeats the end of `previous`; the longest such overlap wins.
 */
function overlapEnd(previous: string, next: string): number | undefined {
  const end = compact(previous.trimEnd(), Math.max(0, previous.trimEnd().length - 2 * MAX_OVERLAP));
  const start = compact(next.trimStart(), 0, 2 * MAX_OVERLAP);
  const tail = end.chars.slice(-MAX_OVERLAP);
  const head = start.chars.slice(0, MAX_OVERLAP);
  // Prefix function of head + separator + tail: its last value is the longest head that ends the tail.
  const joined = [...head, '\0', ...tail];
  const border = prefixFunction(joined);
  for (let k = border[joined.length - 1]!; k >= MIN_OVERLAP; k = border[k - 1]!) {
    const before = tail[tail.length - k - 1];
    const startsWord = before === undefined || /[\s\p{P}\p{S}]/u.test(before);
    if (k >= SURE_OVERLAP || startsWord) return next.length - next.trimStart().length + start.origin[k - 1]! + 1;
  }
  return undefined;
}

/** For each position, the length of the longest proper prefix of `chars` that ends there. */
function prefixFunction(chars: readonly string[]): number[] {
  const border = new Array<number>(chars.length).fill(0);
  for (let i = 1; i < chars.length; i++) {
    let k = border[i - 1]!;
    while (k > 0 && chars[i] !== chars[k]) k = border[k - 1]!;
    if (chars[i] === chars[k]) k++;
    border[i] = k;
  }
  return border;
}

/** `text` from `from` (up to `limit` characters) with runs of whitespace as one space, and where each character came from. */
function compact(text: string, from: number, limit = Number.POSITIVE_INFINITY): { chars: string[]; origin: number[] } {
  const chars: string[] = [];
  const origin: number[] = [];
  for (let i = from; i < text.length && chars.length < limit; i++) {
    const char = text[i]!;
    if (char === '\0') continue;
    const space = /\s/.test(char);
    if (space && chars[chars.length - 1] === ' ') continue;
    chars.push(space ? ' ' : char);
    origin.push(i);
  }
  return { chars, origin };
}

/** The opening fence (``` or ~~~) of a code block still open at the end of `text`, or undefined. */
function openFence(text: string): string | undefined {
  // With a line added, a block still open at the end runs to the new end.
  const probe = `${text}\n.`;
  const last = fencedBlocks(probe).at(-1);
  if (!last || last.end !== probe.length) return undefined;
  return /^ {0,3}(`{3,}|~{3,})/.exec(probe.slice(last.start))?.[1];
}

/**
 * `next` without a fence that opens the same code block again. A fence with a
 * language, or one followed by its own closing fence, opens; a bare fence
 * alone closes the open block and is kept.
 */
function withoutReopenedFence(next: string, fence: string): string {
  const match = /^\s*( {0,3}(`{3,}|~{3,})([^\n]*))(?:\n|$)/.exec(next);
  if (!match || match[2]![0] !== fence[0]) return next;
  const fences = next.match(/^ {0,3}(`{3,}|~{3,})/gm)?.length ?? 0;
  const opens = match[3]!.trim() !== '' || fences % 2 === 0;
  return opens ? next.slice(match[0].length) : next;
}
