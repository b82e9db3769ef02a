/**
 * The `files_write` tool: creates, overwrites or appends to a text file of the
 * workspace. Needs approval unless the user always allows it.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
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
      await verifyWrite(target, content, append);
      return `${append ? 'Appended' : 'Wrote'} ${Buffer.byteLength(content)} bytes to ${displayPath(root, target)}.`;
    },
  };
}

/**
 * Reads the file back (seed 002's action verification): it must exist and hold
 * what was written (the same SHA-256; for an append, its end). Throws when not,
 * so the model is told the write did not take.
 */
export async function verifyWrite(target: string, content: string, append: boolean): Promise<void> {
  let written: Buffer;
  try {
    written = await readFile(target);
  } catch {
    throw new Error('the file is missing right after writing it; the write did not take');
  }
  const expected = Buffer.from(content, 'utf8');
  const actual = append ? written.subarray(Math.max(0, written.length - expected.length)) : written;
  if (sha256(actual) !== sha256(expected)) throw new Error('reading the file back gave different content than was written; the write did not take');
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
