/**
 * Files at rest are readable by their owner only: the data folder holds every
 * conversation, approval and tool output, so it is 0700 and its files 0600,
 * whatever the umask. A folder or file we own but find looser is tightened; one
 * we do not own is left alone with a warning.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';

/** Mode of private folders. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of private files. */
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) as 0700, or tightens an existing one. */
export function ensurePrivateDir(dir: string, log: Logger = silentLogger): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, statSync(dir), PRIVATE_DIR_MODE, log);
}

/**
 * Creates `file` empty as 0600 when it is missing, or tightens an existing one.
 * SQLite gives its -wal and -shm files the mode of the database file, so a
 * database created here keeps its companions private too.
 */
export function ensurePrivateFile(file: string, log: Logger = silentLogger): void {
  // 'a' creates without truncating; the mode applies only when it creates.
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  tighten(file, statSync(file), PRIVATE_FILE_MODE, log);
}

/** Tightens `path` to `mode` if it exists with looser permissions; missing paths are ignored. */
export function tightenIfPresent(path: string, mode: number, log: Logger = silentLogger): void {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return;
  }
  tighten(path, stats, mode, log);
}

function tighten(path: string, stats: Stats, mode: number, log: Logger): void {
  const current = stats.mode & 0o777;
  if ((current & ~mode) === 0) return;
  const shown = { path, mode: current.toString(8), wanted: mode.toString(8) };
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) {
    log.warn(shown, 'data is readable by other users and belongs to another user; restrict its permissions');
    return;
  }
  chmodSync(path, current & mode);
  log.info(shown, 'restricted the permissions of data readable by other users');
}
