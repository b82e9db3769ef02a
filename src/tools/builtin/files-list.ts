/**
 * The `files_list` tool: lists a folder of the workspace.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { displayPath, resolveExisting, workspaceRoot } from './lib/workspace.js';

const parameters = z.object({
  path: z.string().max(1024).default('.').describe('Folder relative to the workspace; default the workspace itself'),
});

/** Entries listed before the rest is summarised. */
const MAX_ENTRIES = 500;

/** Creates the files_list tool for the workspace folder `dir`. */
export function filesListTool(dir: string): Tool<typeof parameters> {
  return {
    name: 'files_list',
    description: 'List the files and folders in a folder of the workspace (folders end with "/").',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 10_000,
    async execute({ path }) {
      const root = await workspaceRoot(dir);
      const folder = await resolveExisting(root, path || '.');
      if (!(await stat(folder)).isDirectory()) throw new ToolError(`"${path}" is a file, not a folder.`);
      const entries = (await readdir(folder, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      const lines = await Promise.all(entries.slice(0, MAX_ENTRIES).map((entry) => describeEntry(folder, entry)));
      if (entries.length > MAX_ENTRIES) lines.push(`... and ${entries.length - MAX_ENTRIES} more`);
      const title = `${displayPath(root, folder)}/ (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'})`;
      return [title, ...lines].join('\n');
    },
  };
}

async function describeEntry(folder: string, entry: { name: string; isDirectory(): boolean; isSymbolicLink(): boolean }): Promise<string> {
  if (entry.isDirectory()) return `${entry.name}/`;
  if (entry.isSymbolicLink()) return `${entry.name} (symlink)`;
  const size = await stat(join(folder, entry.name)).then((s) => s.size, () => undefined);
  return size === undefined ? entry.name : `${entry.name} (${size} bytes)`;
}
