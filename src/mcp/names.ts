/**
 * The names MCP tools have for the model: `<server>__<tool>`, with characters
 * outside `[A-Za-z0-9_-]` replaced, at most 64 characters. Names that collide
 * after that are told apart by a short hash of the original name, so the same
 * server and tools always get the same names.
 */
import { createHash } from 'node:crypto';

/** The longest tool name providers accept. */
export const MAX_TOOL_NAME = 64;

/** `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`. */
export function sanitize(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * The model-facing names of `tools` (server-side names) of `server`, in the
 * same order; `taken` holds names already used (other sources' tools).
 */
export function modelToolNames(server: string, tools: readonly string[], taken: ReadonlySet<string> = new Set()): string[] {
  const used = new Set(taken);
  const names: string[] = [];
  for (const tool of tools) {
    let name = fit(`${sanitize(server)}__${sanitize(tool)}`);
    if (used.has(name)) {
      const suffix = `_${createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 6)}`;
      name = `${name.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    }
    used.add(name);
    names.push(name);
  }
  return names;
}

function fit(name: string): string {
  return name.length <= MAX_TOOL_NAME ? name : name.slice(0, MAX_TOOL_NAME);
}
