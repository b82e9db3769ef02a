/**
 * Detects a model stuck repeating itself inside one reply: the same chunk of
 * text many times over, as a degenerate stream produces.
 */

/** Chunk length compared, in characters. */
const CHUNK = 40;
/** Occurrences of one chunk that count as a loop. */
const REPEATS = 8;

/**
 * Where the repetition starts, or -1 when the text does not loop. A degenerate
 * reply keeps repeating to its end, so the last chunk is looked for throughout
 * the text; a runaway loop finds it many times over.
 */
export function findRepetition(text: string): number {
  if (text.length < CHUNK * REPEATS) return -1;
  const tail = text.slice(-CHUNK);
  // A line of one repeated character (a separator, a table rule) is not a loop.
  if (!tail.trim() || /^(.)\1*$/s.test(tail)) return -1;
  const first = text.indexOf(tail);
  let count = 0;
  for (let at = first; at !== -1; at = text.indexOf(tail, at + 1)) {
    count += 1;
    if (count >= REPEATS) return first;
  }
  return -1;
}

/** The text cut just after the first occurrence of the repeated chunk. */
export function cutRepetition(text: string, start: number): string {
  return text.slice(0, start + CHUNK).trimEnd();
}
