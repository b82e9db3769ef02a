/**
 * When two tool calls count as the same: the same tool, and arguments that
 * agree on most of their keys once values are trimmed and paths normalised
 * (seed 002's similar-arguments rule).
 */
import { posix } from 'node:path';

/** Arguments as an object: parsed JSON, or `{ _: text }` for text that is not a JSON object. */
export function argumentsOf(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return { _: parsed };
  } catch {
    return { _: raw.trim() };
  }
}

/**
 * The share of keys (over the union of both calls' keys) whose values agree.
 * Two calls without arguments agree fully.
 */
export function argumentAgreement(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  if (keys.size === 0) return 1;
  let same = 0;
  for (const key of keys) {
    if (key in a && key in b && comparable(a[key]) === comparable(b[key])) same += 1;
  }
  return same / keys.size;
}

/** A value as a string that compares equal for equivalent values: trimmed, paths normalised, keys sorted. */
export function comparable(value: unknown): string {
  if (typeof value === 'string') return normaliseText(value);
  if (Array.isArray(value)) return `[${value.map(comparable).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${comparable(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** Trims text; a value that looks like a relative path (`./a`, `a/`, `dir/../a`) is normalised. */
function normaliseText(text: string): string {
  const trimmed = text.trim();
  if (!looksLikePath(trimmed)) return JSON.stringify(trimmed);
  const normal = posix.normalize(trimmed).replace(/\/+$/, '');
  return JSON.stringify(normal === '' || normal === '.' ? '.' : normal.replace(/^\.\//, ''));
}

function looksLikePath(text: string): boolean {
  return text.length > 0 && text.length < 1024 && !/\s/.test(text) && !/^[a-z][a-z0-9+.-]*:/i.test(text) && (text.includes('/') || text.startsWith('.'));
}
