/**
 * The files one call can reach: its own workspace, plus each shared folder
 * under `shared/<name>` (read-only unless configured writable). A path is
 * looked up in one of them and confined to it (see `workspace.ts`); a shared
 * folder never shows the data folder or other workspaces inside it.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ToolError } from '../../../errors.js';
import { checkRelativePath, displayPath, isWithin, notFound, resolveExisting, resolveForWrite, workspaceRoot } from './workspace.js';
import { SHARED_FOLDER, workspaceFolder, workspaceOwnerOf, type SharedFolder, type WorkspaceCaller, type WorkspaceSettings } from './workspaces.js';

/** A file or folder a call reached. */
export interface Reached {
  /** Its real path. */
  real: string;
  /** How the model names it: relative to the workspace, `shared/<name>/...` in a shared folder. */
  shown: string;
  /** Whether it is the top of the caller's own workspace (which also shows `shared/`). */
  top: boolean;
  /** Real paths under it that are never shown (private folders inside a shared one). */
  hidden: readonly string[];
}

/** Where a path leads: the folder it is confined to, and the path inside it. */
interface Place {
  root: string;
  rest: string;
  /** `shared/<name>` in a shared folder, empty in the own workspace. */
  prefix: string;
  shared?: SharedFolder;
  hidden: readonly string[];
}

/** The files of one call's workspace. */
export class WorkspaceView {
  /** The caller's own workspace folder. */
  readonly dir: string;

  constructor(
    private readonly settings: WorkspaceSettings,
    caller: WorkspaceCaller,
  ) {
    this.dir = workspaceFolder(settings.root, workspaceOwnerOf(caller));
  }

  /** The shared folders, as `shared/` lists them. */
  get shared(): readonly SharedFolder[] {
    return this.settings.shared;
  }

  /** The own workspace folder, created (0700) on first use, as a real path. */
  ownRoot(): Promise<string> {
    return workspaceRoot(this.dir);
  }

  /** Whether `path` names `shared/` itself, which only lists the shared folders. */
  isSharedIndex(path: string): boolean {
    const parts = partsOf(path);
    return parts.length === 1 && parts[0] === SHARED_FOLDER;
  }

  /** An existing file or folder. */
  async existing(path: string): Promise<Reached> {
    const place = await this.place(path);
    const real = await resolveExisting(place.root, place.rest, path);
    return this.reached(place, real, path);
  }

  /** Where to write `path` (its parent folders are made); refused in a read-only shared folder. */
  async forWrite(path: string): Promise<Reached> {
    this.checkWritable(path);
    const place = await this.place(path);
    const real = await resolveForWrite(place.root, place.rest, path);
    return this.reached(place, real, path);
  }

  /** Refuses, before anyone is asked, a write the tool would refuse anyway. */
  checkWritable(path: string): void {
    checkRelativePath(path);
    const parts = partsOf(path);
    if (parts[0] !== SHARED_FOLDER) return;
    const folder = this.sharedFolder(parts);
    if (!folder.writable) throw new ToolError(`"${path}" is in the shared folder "${folder.name}", which is read-only.`);
  }

  private async place(path: string): Promise<Place> {
    checkRelativePath(path);
    const parts = partsOf(path);
    if (parts[0] !== SHARED_FOLDER) return { root: await this.ownRoot(), rest: parts.join('/') || '.', prefix: '', hidden: [] };
    const folder = this.sharedFolder(parts);
    const root = await realpath(folder.path).catch(() => {
      throw new ToolError(`the shared folder "${folder.name}" is not available now (its folder is missing).`);
    });
    return { root, rest: parts.slice(2).join('/') || '.', prefix: `${SHARED_FOLDER}/${folder.name}`, shared: folder, hidden: await this.hiddenUnder(root) };
  }

  private sharedFolder(parts: readonly string[]): SharedFolder {
    const folder = parts.length > 1 ? this.settings.shared.find((candidate) => candidate.name === parts[1]) : undefined;
    if (folder) return folder;
    const names = this.settings.shared.map((candidate) => candidate.name).join(', ');
    if (parts.length === 1) throw new ToolError(`"${SHARED_FOLDER}" only holds the shared folders (${names || 'none is configured'}); name a file inside one.`);
    throw new ToolError(`there is no shared folder "${parts[1]}" (${names ? `shared folders: ${names}` : 'none is configured'}).`);
  }

  /**
   * The private folders a shared folder holds (all of it, when it is one). A
   * shared folder inside a private one (a person sharing part of their own
   * workspace) shows what it holds.
   */
  private async hiddenUnder(root: string): Promise<string[]> {
    const reals = await Promise.all(this.settings.hidden.map((path) => realpath(path).catch(() => resolve(path))));
    return reals.filter((real) => isWithin(root, real));
  }

  private reached(place: Place, real: string, path: string): Reached {
    if (isHidden(place.hidden, real)) throw notFound(path, Object.assign(new Error('hidden'), { code: 'ENOENT' }));
    const inner = displayPath(place.root, real);
    const shown = place.prefix ? (inner === '.' ? place.prefix : `${place.prefix}/${inner}`) : inner;
    return { real, shown, top: !place.prefix && real === place.root, hidden: place.hidden };
  }
}

/** A path's parts, without empty ones and `.`. */
function partsOf(path: string): string[] {
  return path.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
}

/** Whether the real path `real` is one of the `hidden` folders or inside one. */
export function isHidden(hidden: readonly string[], real: string): boolean {
  return hidden.some((folder) => isWithin(folder, real));
}
