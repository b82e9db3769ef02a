/**
 * Finding where a JSON value embedded in free text ends, so that a model's
 * `<tool_call>{...}` can be read even when nothing reliable follows it.
 */

/**
 * The index just past the object or array that starts at `start`, honouring
 * strings and escapes; undefined when it never closes.
 */
export function jsonEnd(text: string, start: number): number | undefined {
  const opener = text[start];
  if (opener !== '{' && opener !== '[') return undefined;
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === '{' || char === '[') {
      depth += 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return undefined;
}

/** A JSON value read out of free text, and the index just past it. */
export interface EmbeddedJson {
  value: unknown;
  end: number;
}

/** Parses the object or array starting at `start` (after optional whitespace); undefined when it is not valid JSON. */
export function readJsonAt(text: string, start: number): EmbeddedJson | undefined {
  const at = skipSpaces(text, start);
  const end = jsonEnd(text, at);
  if (end === undefined) return undefined;
  try {
    return { value: JSON.parse(text.slice(at, end)) as unknown, end };
  } catch {
    return undefined;
  }
}

/** The first index at or after `start` that is not whitespace. */
export function skipSpaces(text: string, start: number): number {
  let index = start;
  while (index < text.length && /\s/.test(text[index]!)) index += 1;
  return index;
}
