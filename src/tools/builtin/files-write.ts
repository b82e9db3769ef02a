/**
 * The `files_write` tool: creates, overwrites or appends to a text file of the
 * caller's workspace (or of a writable shared folder). Needs approval unless
 * the user always allows it.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { WORKSPACE_FILE_MODE } from './lib/workspace.js';
import { WorkspaceView } from './lib/workspace-view.js';
import type { WorkspaceSettings } from './lib/workspaces.js';

const parameters = z.object({
  path: z.string().min(1).max(1024).describe('File relative to the workspace; missing folders are created'),
  content: z.string().max(1_000_000).describe('Text to write'),
  append: z.boolean().default(false).describe('Add to the end of the file instead of replacing it'),
});

/** Creates the files_write tool over the workspaces of `settings`. */
export function filesWriteTool(settings: WorkspaceSettings): Tool<typeof parameters> {
  return {
    name: 'files_write',
    description: 'Write a text file in the workspace (creates folders as needed; replaces the file unless append is true).',
    parameters,
    readOnly: false,
    requiresApproval: () => 'unlessAutoApproved',
    timeoutMs: 10_000,
    describe: ({ path, content, append }) => `${append ? 'Append' : 'Write'} ${content.length} characters ${append ? 'to' : 'into'} ${path}`,
    async precheck({ path }, ctx) {
      new WorkspaceView(settings, ctx).checkWritable(path);
    },
    async execute({ path, content, append }, ctx) {
      const { real: target, shown } = await new WorkspaceView(settings, ctx).forWrite(path);
      // O_NOFOLLOW: a symlink planted between the check and the open is refused, not followed.
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC);
      // A new file is 0600 whatever the umask; an existing one keeps the mode its owner gave it.
      const file = await open(target, flags, WORKSPACE_FILE_MODE);
      try {
        await file.writeFile(content, 'utf8');
      } finally {
        await file.close();
      }
      const problem = await verifyWrite(target, content, append);
      if (problem) throw new ToolError(`writing ${shown} did not take: ${problem}. Read the file to see what it holds before writing it again.`);
      return `${append ? 'Appended' : 'Wrote'} ${Buffer.byteLength(content)} bytes to ${shown}.`;
    },
  };
}

/**
 * Reads the file at `target` back (seed 002's action verification): it must
 * exist and hold `content` (the same SHA-256; after an append, at its end).
 * Undefined when it does, else what is wrong, in plain words.
 */
export async function verifyWrite(target: string, content: string, append = false): Promise<string | undefined> {
  let written: Buffer;
  try {
    written = await readFile(target);
  } catch {
    return 'the file is missing right after it was written';
  }
  const expected = Buffer.from(content, 'utf8');
  const actual = append ? written.subarray(Math.max(0, written.length - expected.length)) : written;
  if (sha256(actual) !== sha256(expected)) return 'reading the file back gave different content than was written';
  return undefined;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
