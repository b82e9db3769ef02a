/**
 * Detects a model stuck repeating itself inside one reply: the same chunk of
 * text many times over, as a degenerate stream produces.
 */

/** Chunk length compared, in characters. */
const CHUNK = 40;
/** Occurrences of one chunk that count as a loop. */
const REPEATS = 8;

/**
 * Where the repetition starts, or -1 when the text does not loop. Non-overlapping
 * chunks are sampled every `CHUNK` characters, so the cost is linear.
 */
export function findRepetition(text: string): number {
  if (text.length < CHUNK * REPEATS) return -1;
  const seen = new Map<string, { first: number; count: number }>();
  for (let offset = 0; offset + CHUNK <= text.length; offset += CHUNK / 2) {
    const chunk = text.slice(offset, offset + CHUNK);
    if (!chunk.trim() || /^(.)\1*$/s.test(chunk)) continue;
    const entry = seen.get(chunk);
    if (entry) {
      entry.count += 1;
      if (entry.count >= REPEATS) return entry.first;
    } else {
      seen.set(chunk, { first: offset, count: 1 });
    }
  }
  return -1;
}

/** The text cut just after the first occurrence of the repeated chunk. */
export function cutRepetition(text: string, start: number): string {
  return text.slice(0, start + CHUNK).trimEnd();
}
