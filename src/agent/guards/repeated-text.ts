/**
 * Finds a reply that ends in a degenerate stream: the same chunk of text over
 * and over, back to back, up to its end. A long answer that merely reuses
 * phrases, rows or code lines is not one: only prose at the end of the text is
 * examined (code blocks, tables, lists and CSV-like lines are left out), and
 * the copies must follow each other with nothing but whitespace between them.
 */

/** What counts as a degenerate tail. */
export interface RepetitionOptions {
  /** Copies of the unit, back to back, that make a loop. */
  minRepeats: number;
  /** Characters the repeating run must cover (short runs, like "Thanks! Thanks!", are fine). */
  minCovered: number;
  /**
   * A run of fewer copies than this must also fill a third of the text: a
   * paragraph that ends by repeating a phrase a few times is style, a stream
   * that repeats until it is cut off is not.
   */
  manyRepeats: number;
  /** The longest unit looked for, in characters. */
  maxUnit: number;
  /** Characters at the end of the text examined (bounds the cost on long replies). */
  maxTail: number;
}

/** The defaults. */
export const DEFAULT_REPETITION: RepetitionOptions = { minRepeats: 5, minCovered: 200, manyRepeats: 20, maxUnit: 500, maxTail: 16_384 };

/** A degenerate tail found in a reply. */
export interface DegenerateTail {
  /** The text to deliver: everything before the loop and one copy of the unit. */
  keep: string;
  /** The repeating unit (whitespace collapsed, clipped to 200 characters). */
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
  const settings = { ...DEFAULT_REPETITION, ...options };
  const proseStart = trailingProseStart(text);
  const from = Math.max(proseStart, text.length - settings.maxTail);
  const { chars, origin } = compact(text, from);
  const n = chars.length;
  if (n < settings.minCovered) return undefined;
  for (let unit = 1; unit <= Math.min(settings.maxUnit, Math.floor(n / settings.minRepeats)); unit++) {
    // The longest run at the end in which every character equals the one a unit earlier.
    let i = n - 1;
    while (i >= unit && chars[i] === chars[i - unit]) i--;
    const covered = n - 1 - i + unit;
    const repeats = Math.floor(covered / unit);
    if (repeats < settings.minRepeats || covered < settings.minCovered) continue;
    const start = n - covered;
    if (!meaningful(chars.slice(start, start + unit).join(''))) continue;
    if (repeats < settings.manyRepeats && covered * 3 < text.length) continue;
    const end = copyEnd(chars, start, unit);
    const copy = chars.slice(Math.max(0, end - unit), end).join('');
    // A unit the text already used many times before the run is its style, not a loop.
    if (occurrences(text.slice(0, origin[start]!), copy.trim(), settings.minRepeats) >= settings.minRepeats) return undefined;
    return { keep: text.slice(0, origin[end - 1]! + 1).trimEnd(), unit: copy.trim().slice(0, 200), repeats };
  }
  return undefined;
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
  return /^[^,;\t]*([,;\t][^,;\t]*){3,}$/.test(line) && !/[.!?]\s/.test(line); // CSV-like row
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

/** How often `needle` occurs in `text`, counting up to `enough`. */
function occurrences(text: string, needle: string, enough: number): number {
  if (!needle) return 0;
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1 && count < enough; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** A unit worth calling a loop: it has at least two different letters or digits (not a separator like "-----"). */
function meaningful(unit: string): boolean {
  const letters = new Set(unit.toLowerCase().match(/[\p{L}\p{N}]/gu) ?? []);
  return letters.size >= 2;
}
