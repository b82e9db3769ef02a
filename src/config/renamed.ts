/**
 * Config keys are a public contract: a key that is renamed or moved keeps
 * working, with a deprecation warning naming its new place. Add a line to
 * {@link RENAMED_KEYS} when a key moves; the old key is then accepted, not
 * reported as unknown. A key removed for good goes to {@link RETIRED_KEYS}:
 * a file that still sets it starts, with a warning that it has no effect.
 */

/** Old key path to new key path, e.g. `'llm.prices': 'models.prices'`. None has moved yet. */
export const RENAMED_KEYS: Readonly<Record<string, string>> = {};

/**
 * Moves every renamed key of `raw` to its new place (in place) and returns one
 * deprecation warning per key moved. A value already at the new place wins.
 */
export function applyRenames(raw: Record<string, unknown>, renamed: Readonly<Record<string, string>> = RENAMED_KEYS): string[] {
  const warnings: string[] = [];
  for (const [from, to] of Object.entries(renamed)) {
    const found = take(raw, from.split('.'));
    if (!found.present) continue;
    if (!has(raw, to.split('.'))) put(raw, to.split('.'), found.value);
    warnings.push(`config key ${from} is deprecated; it now lives at ${to}`);
  }
  return warnings;
}

/** Key path of a removed key to why it has no effect; the key is accepted and ignored. */
export const RETIRED_KEYS: Readonly<Record<string, string>> = {
  'agent.maxIterations': 'it was never read; agent.maxToolIterations caps the tool rounds of a turn',
};

/**
 * Removes every retired key of `raw` (in place) and returns one warning per key
 * found, so that an older config file still starts.
 */
export function dropRetired(raw: Record<string, unknown>, retired: Readonly<Record<string, string>> = RETIRED_KEYS): string[] {
  return Object.entries(retired).flatMap(([key, why]) =>
    take(raw, key.split('.')).present ? [`config key ${key} has no effect and can be removed: ${why}`] : [],
  );
}

function take(raw: Record<string, unknown>, path: string[]): { present: boolean; value?: unknown } {
  const parent = walk(raw, path.slice(0, -1));
  const last = path.at(-1)!;
  if (!parent || !Object.hasOwn(parent, last)) return { present: false };
  const value = parent[last];
  delete parent[last];
  return { present: true, value };
}

function has(raw: Record<string, unknown>, path: string[]): boolean {
  const parent = walk(raw, path.slice(0, -1));
  return Boolean(parent && Object.hasOwn(parent, path.at(-1)!));
}

function put(raw: Record<string, unknown>, path: string[], value: unknown): void {
  let node = raw;
  for (const part of path.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}

function walk(raw: Record<string, unknown>, path: string[]): Record<string, unknown> | undefined {
  let node: unknown = raw;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Record<string, unknown>) : undefined;
}
