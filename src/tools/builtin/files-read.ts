/**
 * The `files_read` tool: reads a text file of the caller's workspace or of a
 * shared folder.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { WorkspaceView } from './lib/workspace-view.js';
import type { WorkspaceSettings } from './lib/workspaces.js';

const parameters = z.object({
  path: z.string().min(1).max(1024).describe('File relative to the workspace'),
});

/** Bytes read from a file at most; the pipeline then bounds what the model sees. */
export const MAX_READ_BYTES = 1_000_000;

/** Creates the files_read tool over the workspaces of `settings`. */
export function filesReadTool(settings: WorkspaceSettings): Tool<typeof parameters> {
  return {
    name: 'files_read',
    description: 'Read a text file of the workspace.',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 10_000,
    async execute({ path }, ctx) {
      const { real } = await new WorkspaceView(settings, ctx).existing(path);
      const file = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const info = await file.stat();
        if (!info.isFile()) throw new ToolError(`"${path}" is not a regular file.`);
        const buffer = Buffer.alloc(Math.min(info.size, MAX_READ_BYTES));
        const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
        const bytes = buffer.subarray(0, bytesRead);
        if (bytes.subarray(0, 8192).includes(0)) throw new ToolError(`"${path}" looks like a binary file (${info.size} bytes); only text files can be read.`);
        const note = info.size > bytesRead ? `\n[file is ${info.size} bytes; only the first ${bytesRead} were read]` : '';
        return bytes.toString('utf8') + note;
      } finally {
        await file.close();
      }
    },
  };
}
