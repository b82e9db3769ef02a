/**
 * The `files_write` tool: creates, overwrites or appends to a text file of the
 * workspace. Needs approval unless the user always allows it.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool } from '../types.js';
import { displayPath, resolveForWrite, WORKSPACE_FILE_MODE, workspaceRoot } from './lib/workspace.js';

const parameters = z.object({
  path: z.string().min(1).max(1024).describe('File relative to the workspace; missing folders are created'),
  content: z.string().max(1_000_000).describe('Text to write'),
  append: z.boolean().default(false).describe('Add to the end of the file instead of replacing it'),
});

/** Creates the files_write tool for the workspace folder `dir`. */
export function filesWriteTool(dir: string): Tool<typeof parameters> {
  return {
    name: 'files_write',
    description: 'Write a text file in the workspace (creates folders as needed; replaces the file unless append is true).',
    parameters,
    readOnly: false,
    requiresApproval: () => 'unlessAutoApproved',
    timeoutMs: 10_000,
    describe: ({ path, content, append }) => `${append ? 'Append' : 'Write'} ${content.length} characters ${append ? 'to' : 'into'} ${path}`,
    async execute({ path, content, append }) {
      const root = await workspaceRoot(dir);
      const target = await resolveForWrite(root, path);
      // O_NOFOLLOW: a symlink planted between the check and the open is refused, not followed.
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC);
      // A new file is 0600 whatever the umask; an existing one keeps the mode its owner gave it.
      const file = await open(target, flags, WORKSPACE_FILE_MODE);
      try {
        await file.writeFile(content, 'utf8');
      } finally {
        await file.close();
      }
      return `${append ? 'Appended' : 'Wrote'} ${Buffer.byteLength(content)} bytes to ${displayPath(root, target)}.`;
    },
  };
}
