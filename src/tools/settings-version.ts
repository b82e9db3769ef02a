/**
 * The version of the admin policy and of users' permissions, for instances
 * that share one store and each keep a copy of those settings in memory.
 *
 * Every change moves the version on before it is reported done; every read of
 * a setting first asks for the version and drops the copy when it moved. A
 * message between the instances only makes the drop come sooner: an instance
 * that missed it still never decides with a setting older than the last
 * change that was reported done. In one process there is no version to ask
 * for, and the copy in memory is always the latest.
 */

/** The shared version of the settings (see the file's comment). */
export interface SettingsVersion {
  /** The version now, asked of the shared store: callers of the same moment may share one read, never an earlier one. */
  read(): Promise<number>;
  /** Moves the version on after a change was stored; resolves once every instance would read the new one. */
  bump(): Promise<void>;
}

/**
 * Keeps a copy in memory in step with the shared version: `drop` empties it
 * whenever the version read differs from the one the copy was filled under.
 * The returned check resolves once the copy holds nothing older than the
 * version read by that call; a copy filled after it is at least that new,
 * since a change is stored before its version moves.
 *
 * @example
 * const fresh = versionGate(version, () => cache.clear());
 * async function get(key) { await fresh(); return cache.get(key) ?? load(key); }
 */
export function versionGate(version: SettingsVersion, drop: () => void): () => Promise<void> {
  let seen: number | undefined;
  return async () => {
    const current = await version.read();
    // Not `>`: a store emptied and started again counts from zero.
    if (current === seen) return;
    drop();
    seen = current;
  };
}
