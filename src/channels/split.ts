/**
 * Splits markdown text into parts no longer than a platform's limit, cutting at
 * paragraph, then line, then word boundaries, and never inside a fenced code
 * block: a block that must be cut is closed and reopened with its language.
 */

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/**
 * Splits `text` into parts of at most `limit` characters.
 * @example splitMessage('a\n\nb', 3) // ['a', 'b']
 */
export function splitMessage(text: string, limit: number): string[] {
  if (limit < 20) throw new RangeError('limit must be at least 20 characters');
  if (text.length <= limit) return [text];
  const parts: string[] = [];
  let current = '';
  let fence: { marker: string; info: string } | undefined;

  const flush = () => {
    let part = current;
    if (fence) part += `\n${fence.marker}`;
    if (part.trim()) parts.push(part.replace(/\s+$/, ''));
    current = fence ? `${fence.marker}${fence.info}\n` : '';
  };

  for (const line of text.split('\n')) {
    const reserve = fence ? fence.marker.length + 1 : 0;
    for (const piece of cutLine(line, limit - reserve - openingLength(fence) - 1)) {
      const addition = current ? `\n${piece}` : piece;
      const closing = fenceAfter(fence, piece);
      const closeReserve = closing ? closing.marker.length + 1 : 0;
      if (current.length + addition.length + closeReserve > limit && current.trim()) {
        flush();
        current += piece;
      } else {
        current += addition;
      }
      fence = closing;
    }
  }
  if (current.trim()) parts.push(current.replace(/\s+$/, ''));
  return preferParagraphs(parts, limit);
}

function openingLength(fence: { marker: string; info: string } | undefined): number {
  return fence ? fence.marker.length + fence.info.length + 1 : 0;
}

/** The fence state after `line`: opened, closed or unchanged. */
function fenceAfter(fence: { marker: string; info: string } | undefined, line: string) {
  const match = FENCE.exec(line);
  if (!match) return fence;
  const marker = match[2]!;
  if (!fence) return { marker, info: match[3]!.trim() };
  return marker.startsWith(fence.marker[0]!) && marker.length >= fence.marker.length && !match[3]!.trim()
    ? undefined
    : fence;
}

/** Cuts one over-long line at word boundaries (or hard, for a word longer than the limit). */
function cutLine(line: string, limit: number): string[] {
  const max = Math.max(10, limit);
  if (line.length <= max) return [line];
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > max) {
    let cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) cut = max;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, '');
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/**
 * Moves the tail of a part back to the next part when a blank line (paragraph
 * boundary) sits in the last third of the part, outside code, so parts end at
 * paragraphs where possible.
 */
function preferParagraphs(parts: string[], limit: number): string[] {
  const result = [...parts];
  for (let i = 0; i < result.length - 1; i++) {
    const part = result[i]!;
    if (countFences(part) % 2 !== 0 || part.includes('```') || part.includes('~~~')) continue;
    const cut = part.lastIndexOf('\n\n');
    if (cut < (part.length * 2) / 3) continue;
    const tail = part.slice(cut + 2);
    const next = result[i + 1]!;
    if (next.startsWith('```') || next.startsWith('~~~')) continue;
    if (tail.length + 2 + next.length > limit) continue;
    result[i] = part.slice(0, cut);
    result[i + 1] = `${tail}\n\n${next}`;
  }
  return result;
}

function countFences(text: string): number {
  return text.split('\n').filter((line) => FENCE.test(line)).length;
}
