/**
 * Continuing a text reply that the output limit cut (seed 002): the model is
 * asked to go on, and the pieces are joined without the part the model wrote
 * twice (it often restarts the last sentence, line or paragraph).
 */

/** The request to continue, sent as a user message. */
export const CONTINUE_PROMPT =
  'Your reply was cut off by the length limit. Continue exactly where it stopped: do not repeat what you already wrote and do not start over.';

/** The longest overlap looked for, in characters. */
const MAX_OVERLAP = 2_000;
/** Overlaps shorter than this are taken for chance, unless they start a word. */
const MIN_OVERLAP = 4;
/** Overlaps at least this long are accepted wherever they start. */
const SURE_OVERLAP = 20;

/**
 * Joins `previous` and its continuation `next`, dropping the start of `next`
 * that repeats the end of `previous`.
 *
 * @example
 * stitch('The answer ends', 'answer ends here.') // 'The answer ends here.'
 */
export function stitch(previous: string, next: string): string {
  if (!next.trim()) return previous;
  if (!previous.trim()) return next;
  let rest = next;
  // Cut inside a code block, the model may open it again: that fence is not wanted.
  if (insideFence(previous)) rest = rest.replace(/^\s*(`{3,}|~{3,})[^\n]*\n/, '');
  const overlap = longestOverlap(previous, rest) ?? longestOverlap(previous.trimEnd(), rest.trimStart());
  if (overlap !== undefined) {
    const [head, tail] = overlap;
    return head + tail;
  }
  return previous + rest;
}

/** The pieces to join when the end of `a` is repeated at the start of `b`, or undefined. */
function longestOverlap(a: string, b: string): [string, string] | undefined {
  const max = Math.min(a.length, b.length, MAX_OVERLAP);
  for (let k = max; k >= MIN_OVERLAP; k--) {
    if (!a.endsWith(b.slice(0, k))) continue;
    const before = a[a.length - k - 1];
    const startsWord = before === undefined || /[\s\p{P}]/u.test(before);
    if (k >= SURE_OVERLAP || startsWord) return [a, b.slice(k)];
  }
  return undefined;
}

/** Whether `text` ends inside a fenced code block. */
function insideFence(text: string): boolean {
  return (text.match(/^\s{0,3}(`{3,}|~{3,})/gm) ?? []).length % 2 === 1;
}
