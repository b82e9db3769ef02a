/**
 * Canonical fingerprints of tool-call batches, so that the same calls with the
 * same arguments compare equal whatever the key order the model used.
 */
import type { ToolCall } from '../../llm/types.js';

/** JSON with object keys sorted recursively; unparsable text is used as is. */
export function canonicalArguments(raw: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(raw)));
  } catch {
    return raw.trim();
  }
}

/** One string for a batch: tool names and canonical arguments, in call order. */
export function batchFingerprint(calls: readonly ToolCall[]): string {
  return calls.map((call) => `${call.name}(${canonicalArguments(call.arguments)})`).join('|');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, item]) => [key, sortKeys(item)]));
  }
  return value;
}
