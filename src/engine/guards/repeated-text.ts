/**
 * Finds a reply that ends in a degenerate stream: the same chunk of text over
 * and over, back to back, up to its end. A long answer that merely reuses
 * phrases, rows or code lines is not one: only the prose that ends the text is
 * examined (code blocks, tables, lists and CSV-like lines are left out), and
 * the copies must follow each other with nothing but whitespace between them.
 */

/** What counts as a degenerate tail. */
export interface RepetitionOptions {
  /** Copies of the unit, back to back, that make a loop. */
  minRepeats: number;
  /** The shortest unit looked for, in characters. */
  minChunk: number;
  /** The longest unit looked for, in characters (a line or a short paragraph). */
  maxChunk: number;
  /** Characters the repeating run must cover (short runs, like "Thanks! Thanks!", are fine). */
  minCovered: number;
  /**
   * A run of fewer copies than this must also fill a third of the text: a
   * paragraph that ends by repeating a phrase a few times is style, a stream
   * that repeats until it is cut off is not.
   */
  manyRepeats: number;
  /** Characters at the end of the text searched for a unit (bounds the cost on long replies). */
  maxTail: number;
}

/** The defaults. */
export const DEFAULT_REPETITION = {
  minRepeats: 6,
  minChunk: 2,
  maxChunk: 1_000,
  minCovered: 200,
  manyRepeats: 20,
  maxTail: 16_384,
} as const satisfies RepetitionOptions;

/** A degenerate tail found in a reply. */
export interface DegenerateTail {
  /** The text to deliver: everything before the loop and one copy of the unit. */
  keep: string;
  /** The repeating unit (whitespace collapsed, clipped to 200 characters), for the log. */
  unit: string;
  /** Copies found. */
  repeats: number;
}

/** The line after kept text when a loop was cut. */
export const REPETITION_CUT_NOTE = '(I started repeating the same text over and over here, so I cut the rest.)';

/**
 * The degenerate tail of `text`, or undefined when it has none.
 *
 * @example
 * findDegenerateTail('Intro. ' + 'I will check. '.repeat(40))?.keep // 'Intro. I will check.'
 */
export function findDegenerateTail(text: string, options: Partial<RepetitionOptions> = {}): DegenerateTail | undefined {
  const settings: RepetitionOptions = { ...DEFAULT_REPETITION, ...options };
  const proseStart = trailingProseStart(text);
  let tail = compact(text, Math.max(proseStart, text.length - settings.maxTail));
  if (tail.chars.length < settings.minCovered) return undefined;
  // A unit with fewer than two different letters or digits (a separator such as "-----") is never a loop.
  const first = Math.max(settings.minChunk, shortestMeaningfulEnd(tail.chars));
  const last = Math.min(settings.maxChunk, Math.floor(tail.chars.length / settings.minRepeats));
  for (let unit = first; unit <= last; unit++) {
    let covered = periodicEnd(tail.chars, unit);
    if (covered === tail.chars.length && tail.origin[0]! > proseStart) {
      // The run reaches back past the part searched: find where it really starts.
      tail = compact(text, proseStart);
      covered = periodicEnd(tail.chars, unit);
    }
    const repeats = Math.floor(covered / unit);
    if (repeats < settings.minRepeats || covered < settings.minCovered) continue;
    if (repeats < settings.manyRepeats && covered * 3 < text.length) continue;
    const start = tail.chars.length - covered;
    const end = copyEnd(tail.chars, start, unit);
    const copy = tail.chars.slice(Math.max(0, end - unit), end).join('').trim();
    return { keep: text.slice(0, tail.origin[end - 1]! + 1).trimEnd(), unit: copy.slice(0, 200), repeats };
  }
  return undefined;
}

/** How many characters at the end of `chars` repeat with period `unit`, counting the first copy. */
function periodicEnd(chars: readonly string[], unit: number): number {
  let i = chars.length - 1;
  while (i >= unit && chars[i] === chars[i - unit]) i--;
  return chars.length - 1 - i + unit;
}

/**
 * The length of the shortest end of `chars` holding two different letters or
 * digits. A unit that repeats up to the end holds the same characters as the
 * end of that length, so shorter units are separators and need no search.
 */
function shortestMeaningfulEnd(chars: readonly string[]): number {
  let seen: string | undefined;
  for (let i = chars.length - 1; i >= 0; i--) {
    const char = chars[i]!.toLowerCase();
    if (!/[\p{L}\p{N}]/u.test(char)) continue;
    if (seen === undefined) seen = char;
    else if (char !== seen) return chars.length - i;
  }
  return Number.POSITIVE_INFINITY;
}

/**
 * Where the first copy ends. The run found may begin a few characters before
 * the first copy (the text before it can end like the unit does), so the copy
 * ends at the first sentence end, else word end, at or after one unit.
 */
function copyEnd(chars: readonly string[], start: number, unit: number): number {
  const last = Math.min(chars.length, start + 2 * unit);
  // From one character short of a unit: the unit may end with the space after its sentence.
  const first = start + Math.max(1, unit - 1);
  for (let end = first; end <= last; end++) if (/[.!?]/.test(chars[end - 1]!) && (end === chars.length || chars[end] === ' ')) return end;
  for (let end = first; end <= last; end++) if (end === chars.length || chars[end] === ' ') return end;
  return start + unit;
}

/**
 * Where the block of plain prose that ends the text starts: after the last
 * line that is code (fenced or indented), a table row, a list item or a
 * CSV-like row. A text that ends inside such a block has no prose tail.
 */
function trailingProseStart(text: string): number {
  const lines = text.split('\n');
  const structured = markStructured(lines);
  let offset = text.length;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (structured[i]) return offset;
    offset -= lines[i]!.length + (i > 0 ? 1 : 0);
  }
  return 0;
}

function markStructured(lines: readonly string[]): boolean[] {
  const marks: boolean[] = [];
  let fence: string | undefined;
  for (const line of lines) {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      marks.push(true);
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      marks.push(true);
      continue;
    }
    marks.push(isStructuredLine(line));
  }
  return marks;
}

function isStructuredLine(line: string): boolean {
  if (/^( {4}|\t)\S/.test(line)) return true; // indented code
  if (/^\s*\|/.test(line)) return true; // table row
  if (/^\s*([-*+]|\d{1,4}[.)])\s+\S/.test(line)) return true; // list item
  // A CSV-like row: several separators, and not a sentence (a sentence with commas ends like one).
  return /^[^,;\t]*([,;\t][^,;\t]*){3,}$/.test(line) && !/[.!?]["')]?\s*$|[.!?]\s/.test(line);
}

/** The text from `from` with runs of whitespace as one space, and where each character came from. */
function compact(text: string, from: number): { chars: string[]; origin: number[] } {
  const chars: string[] = [];
  const origin: number[] = [];
  for (let i = from; i < text.length; i++) {
    const char = text[i]!;
    const space = /\s/.test(char);
    if (space && (chars.length === 0 || chars[chars.length - 1] === ' ')) continue;
    chars.push(space ? ' ' : char);
    origin.push(i);
  }
  while (chars[chars.length - 1] === ' ') {
    chars.pop();
    origin.pop();
  }
  return { chars, origin };
}
