/**
 * The key names the schema knows, for telling a typo from a setting: a key the
 * schema does not know is an error (a misspelt allowlist would leave the bot
 * open to everyone), reported with the closest known key at the same level.
 */
import { z } from 'zod';

/** Object schema under defaults, optionals and transforms, or undefined for a leaf. */
function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  let inner: unknown = schema;
  for (;;) {
    if (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap();
    else if (inner instanceof z.ZodPipe) inner = inner.in;
    else break;
  }
  return inner instanceof z.ZodObject ? inner : undefined;
}

/** The schema that validates the value at `path` below `root` (record keys match any name). */
function schemaAt(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let node: z.ZodType | undefined = root;
  for (const part of path) {
    if (!node) return undefined;
    const object = objectOf(node);
    if (object) {
      node = object.shape[String(part)] as z.ZodType | undefined;
      continue;
    }
    let inner: unknown = node;
    while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap();
    if (inner instanceof z.ZodRecord) node = inner.valueType as z.ZodType;
    else if (inner instanceof z.ZodArray) node = inner.element as z.ZodType;
    else return undefined;
  }
  return node;
}

/** The keys an object at `path` may have, or [] when the value there is not an object of known keys. */
export function knownKeysAt(root: z.ZodType, path: readonly PropertyKey[]): string[] {
  const node = schemaAt(root, path);
  const object = node && objectOf(node);
  return object ? Object.keys(object.shape) : [];
}

/**
 * The known key closest to `name`, when it is close enough to be a typo:
 * `telegarm` gives `telegram`, `allowedUser` gives `allowedUsers`.
 */
export function closestKey(name: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(name.toLowerCase(), key.toLowerCase());
    if (!best || distance < best.distance) best = { key, distance };
  }
  // A third of the name (at least 2) covers swapped, missing and doubled letters,
  // without offering `owners` for `model`.
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.key : undefined;
}

/** Levenshtein distance, with a swap of two neighbouring letters counted as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = rows[i]!;
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}
