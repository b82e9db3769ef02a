/**
 * The `files_list` tool: lists a folder of the caller's workspace, where
 * `shared/` holds the folders the owner shares.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { isHidden, WorkspaceView } from './lib/workspace-view.js';
import { SHARED_FOLDER, type WorkspaceSettings } from './lib/workspaces.js';

const parameters = z.object({
  path: z.string().max(1024).default('.').describe('Folder relative to the workspace; default the workspace itself'),
});

/** Entries listed before the rest is summarised. */
const MAX_ENTRIES = 500;

/** Creates the files_list tool over the workspaces of `settings`. */
export function filesListTool(settings: WorkspaceSettings): Tool<typeof parameters> {
  return {
    name: 'files_list',
    description: 'List the files and folders in a folder of the workspace (folders end with "/"; shared/ holds folders shared with everyone).',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 10_000,
    async execute({ path }, ctx) {
      const view = new WorkspaceView(settings, ctx);
      if (view.isSharedIndex(path)) return titled(SHARED_FOLDER, view.shared.map((folder) => `${folder.name}/${folder.writable ? '' : ' (read-only)'}`));
      const folder = await view.existing(path || '.');
      if (!(await stat(folder.real)).isDirectory()) throw new ToolError(`"${path}" is a file, not a folder.`);
      const entries = (await readdir(folder.real, { withFileTypes: true }))
        .filter((entry) => !isHidden(folder.hidden, join(folder.real, entry.name)))
        // At the top of a workspace, `shared/` is the shared folders, whatever is on disk there.
        .filter((entry) => !(folder.top && entry.name === SHARED_FOLDER))
        .sort((a, b) => a.name.localeCompare(b.name));
      const lines = await Promise.all(entries.slice(0, MAX_ENTRIES).map((entry) => describeEntry(folder.real, entry)));
      if (entries.length > MAX_ENTRIES) lines.push(`... and ${entries.length - MAX_ENTRIES} more`);
      if (folder.top && view.shared.length) lines.push(`${SHARED_FOLDER}/ (shared with everyone)`);
      return titled(folder.shown, lines, entries.length + (folder.top && view.shared.length ? 1 : 0));
    },
  };
}

function titled(shown: string, lines: string[], count = lines.length): string {
  return [`${shown}/ (${count} entr${count === 1 ? 'y' : 'ies'})`, ...lines].join('\n');
}

async function describeEntry(folder: string, entry: { name: string; isDirectory(): boolean; isSymbolicLink(): boolean }): Promise<string> {
  if (entry.isDirectory()) return `${entry.name}/`;
  if (entry.isSymbolicLink()) return `${entry.name} (symlink)`;
  const size = await stat(join(folder, entry.name)).then((s) => s.size, () => undefined);
  return size === undefined ? entry.name : `${entry.name} (${size} bytes)`;
}
