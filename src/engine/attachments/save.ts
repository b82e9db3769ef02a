/**
 * Where a received file goes: `attachments/` of the conversation's workspace,
 * under a name made safe (no folders, no control or reserved characters, no
 * leading dot) and unique (`notes (2).md` beside another `notes.md`). The same
 * bytes received again (a turn run again after a restart) reuse their file.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';

/** The folder of received files, inside a workspace. */
export const ATTACHMENTS_FOLDER = 'attachments';

/** Longest file name kept, in characters (the extension included). */
const MAX_NAME_LENGTH = 100;
/** Names tried before giving up on a free one. */
const MAX_TRIES = 1000;

/**
 * A file name safe to create: the last part of any path, without control,
 * format (bidi) or reserved characters, not hidden, not too long; with `ext`
 * appended when it has no extension of its own.
 *
 * @example safeFileName('../../etc/passwd') // 'passwd'
 * @example safeFileName('photo', 'jpg') // 'photo.jpg'
 */
export function safeFileName(name: string, ext?: string): string {
  const last = name.split(/[/\\]/).pop() ?? '';
  let safe = last
    .normalize('NFC')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '')
    .replace(/[<>:"|?*]/g, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+/, '')
    .replace(/[\s.]+$/, '');
  if (!safe) safe = 'file';
  if (ext && !extname(safe)) safe = `${safe}.${ext}`;
  return shortened(safe);
}

/** `name` cut to the longest allowed, its extension kept. */
function shortened(name: string): string {
  const chars = [...name];
  if (chars.length <= MAX_NAME_LENGTH) return name;
  const ext = [...extname(name)].slice(0, 16).join('');
  return chars.slice(0, MAX_NAME_LENGTH - ext.length).join('') + ext;
}

/** SHA-256 of `bytes`, hex. */
export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Saves `bytes` as `attachments/<name>` in `workspace` (a free variant of the
 * name when it is taken by other bytes); resolves with the path relative to
 * the workspace. Never writes through a link: a link where the folder or the
 * file would be is refused.
 */
export async function saveInWorkspace(workspace: string, name: string, bytes: Uint8Array): Promise<string> {
  const folder = join(workspace, ATTACHMENTS_FOLDER);
  await mkdir(folder, { recursive: true });
  const info = await lstat(folder);
  if (!info.isDirectory()) throw new Error(`${ATTACHMENTS_FOLDER} in the workspace is not a folder`);
  const hash = sha256Of(bytes);
  for (let n = 1; n <= MAX_TRIES; n += 1) {
    const candidate = n === 1 ? name : numbered(name, n);
    if (await tryWrite(join(folder, candidate), bytes, hash)) return `${ATTACHMENTS_FOLDER}/${candidate}`;
  }
  throw new Error('no free file name in the attachments folder');
}

/** `notes (2).md` */
function numbered(name: string, n: number): string {
  const ext = extname(name);
  return `${name.slice(0, name.length - ext.length)} (${n})${ext}`;
}

/** Creates the file (never following a link); true when it now holds the bytes, false when the name is taken by others. */
async function tryWrite(path: string, bytes: Uint8Array, hash: string): Promise<boolean> {
  try {
    await writeFile(path, bytes, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const existing = await lstat(path);
  return existing.isFile() && existing.size === bytes.byteLength && sha256Of(await readFile(path)) === hash;
}

/** Whether `path` (relative to `workspace`) is a file there of `sizeBytes` (cheap: no hashing at every turn). */
export async function holds(workspace: string, path: string, sizeBytes: number): Promise<boolean> {
  try {
    const info = await lstat(join(workspace, path));
    return info.isFile() && info.size === sizeBytes;
  } catch {
    return false;
  }
}
