/**
 * Confining file tools to one folder (a workspace, or a shared folder). A path
 * from the model must be relative, may not contain `..`, and must still be
 * inside the folder once every symlink is resolved (for writes: the nearest
 * existing parent too, so a symlinked folder cannot smuggle a new file
 * outside). Messages quote `named`, the path as the model wrote it.
 */
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ToolError } from '../../../errors.js';

/** Folders made for the workspace are private: they hold whatever the model wrote or fetched. */
export const WORKSPACE_DIR_MODE = 0o700;
/** Files the tools create in the workspace are readable by the owner only. */
export const WORKSPACE_FILE_MODE = 0o600;

/**
 * The workspace root, created (0700) on first use, as a real path. An existing
 * folder keeps its permissions: a configured workspace may be the user's own folder.
 */
export async function workspaceRoot(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: WORKSPACE_DIR_MODE });
  return realpath(dir);
}

/** Throws ToolError unless `path` is a plain relative path without `..`. */
export function checkRelativePath(path: string): void {
  if (path.includes('\0')) throw new ToolError('the path contains a NUL character.');
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\')) {
    throw new ToolError(`"${path}" is an absolute path; use a path relative to the workspace.`);
  }
  if (path.split(/[\\/]+/).includes('..')) throw new ToolError(`"${path}" leaves the workspace ("..") and is refused.`);
}

/** The real path of an existing file or folder inside the workspace. */
export async function resolveExisting(root: string, path: string, named = path): Promise<string> {
  checkRelativePath(path);
  let real: string;
  try {
    real = await realpath(join(root, path));
  } catch (error) {
    throw notFound(named, error);
  }
  assertInside(root, real, named);
  return real;
}

/**
 * Where to write `path`: its parent folders are created inside the workspace;
 * an existing symlink is followed only when it stays inside. The caller opens
 * the returned path with O_NOFOLLOW.
 */
export async function resolveForWrite(root: string, path: string, named = path): Promise<string> {
  checkRelativePath(path);
  const target = join(root, path);
  if (target === root) throw new ToolError('a file name is needed, not a folder.');
  const parent = dirname(target);
  assertInside(root, await realpath(await nearestExisting(parent)), named);
  await mkdir(parent, { recursive: true, mode: WORKSPACE_DIR_MODE });
  const realParent = await realpath(parent);
  assertInside(root, realParent, named);
  const finalPath = join(realParent, basename(target));
  const stat = await lstat(finalPath).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    const real = await realpath(finalPath).catch((error: unknown) => {
      throw notFound(named, error);
    });
    assertInside(root, real, named);
    return real;
  }
  if (stat?.isDirectory()) throw new ToolError(`"${named}" is a folder, not a file.`);
  return finalPath;
}

/** `path` relative to the workspace, with `/` separators, for messages. */
export function displayPath(root: string, real: string): string {
  return relative(root, real).split(sep).join('/') || '.';
}

async function nearestExisting(path: string): Promise<string> {
  let current = path;
  for (;;) {
    if (await lstat(current).then(() => true, () => false)) return current;
    const up = dirname(current);
    if (up === current) return current;
    current = up;
  }
}

/** Whether the real path `real` is `folder` or inside it. */
export function isWithin(folder: string, real: string): boolean {
  return real === folder || real.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

function assertInside(root: string, real: string, path: string): void {
  if (!isWithin(root, real)) throw new ToolError(`"${path}" resolves outside the workspace (through a symlink) and is refused.`);
}

/** The error for a path that is not there (or cannot be opened), in the model's words. */
export function notFound(path: string, error: unknown): ToolError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new ToolError(`"${path}" does not exist in the workspace.`);
  if (code === 'ELOOP') return new ToolError(`"${path}" is a symlink loop.`);
  return new ToolError(`cannot open "${path}" (${code ?? 'unknown error'}).`);
}
