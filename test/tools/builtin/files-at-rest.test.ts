/**
 * Workspace files at rest: the workspace and the folders files_write makes are
 * 0700, the files it creates 0600, with the umask opened wide (0) so that the
 * usual 022 cannot hide a missing mode.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesWriteTool } from '../../../src/tools/builtin/files-write.js';
import { makeContext, tempDir, workspacesAt } from '../support.js';

const temp = tempDir('pincer-workspace-modes-');
let previousUmask: number;
beforeAll(() => {
  previousUmask = process.umask(0);
});
afterAll(() => {
  process.umask(previousUmask);
  temp.cleanup();
});

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('files_write at rest', () => {
  it('creates the workspaces and new folders 0700 and new files 0600', async () => {
    const root = join(temp.dir, 'data', 'workspace');
    const result = await filesWriteTool(workspacesAt(root)).execute({ path: 'notes/2024/diary.md', content: 'dear diary', append: false }, makeContext());
    expect(result).toContain('notes/2024/diary.md');
    expect(modeOf(root)).toBe('700');
    expect(modeOf(join(root, 'users'))).toBe('700');
    expect(modeOf(join(root, 'users', 'telegram'))).toBe('700');
    const workspace = join(root, 'users', 'telegram', '1');
    expect(modeOf(workspace)).toBe('700');
    expect(modeOf(join(workspace, 'notes'))).toBe('700');
    expect(modeOf(join(workspace, 'notes', '2024'))).toBe('700');
    expect(modeOf(join(workspace, 'notes', '2024', 'diary.md'))).toBe('600');
  });
});
