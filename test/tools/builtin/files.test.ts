import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesListTool } from '../../../src/tools/builtin/files-list.js';
import { filesReadTool } from '../../../src/tools/builtin/files-read.js';
import { filesWriteTool, verifyWrite } from '../../../src/tools/builtin/files-write.js';
import type { WorkspaceSettings } from '../../../src/tools/builtin/lib/workspaces.js';
import { makeContext, OWN_WORKSPACE, tempDir, workspacesAt } from '../support.js';

let root: string;
let workspaces: WorkspaceSettings;
let workspace: string;
let outside: string;
let cleanup: () => void;

beforeEach(() => {
  const temp = tempDir('pincer-files-');
  root = temp.dir;
  cleanup = temp.cleanup;
  workspaces = workspacesAt(join(root, 'workspace'));
  workspace = join(workspaces.root, OWN_WORKSPACE);
  outside = join(root, 'outside');
  mkdirSync(join(workspace, 'notes'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, 'notes', 'todo.md'), '- buy milk\n');
  writeFileSync(join(outside, 'secret.txt'), 'top secret');
  symlinkSync(join(outside, 'secret.txt'), join(workspace, 'leak.txt'));
  symlinkSync(outside, join(workspace, 'escape'));
  symlinkSync(join(workspace, 'notes', 'todo.md'), join(workspace, 'todo-link.md'));
});
afterEach(() => cleanup());

const ctx = makeContext();
const read = (path: string) => filesReadTool(workspaces).execute({ path }, ctx);
const write = (path: string, content: string, append = false) => filesWriteTool(workspaces).execute({ path, content, append }, ctx);
const list = (path = '.') => filesListTool(workspaces).execute({ path }, ctx);

describe('workspace confinement', () => {
  it.each(['../outside/secret.txt', 'notes/../../outside/secret.txt', '..', 'notes/..\\..\\x'])('refuses traversal: %s', async (path) => {
    await expect(read(path)).rejects.toThrow(`"${path}" leaves the workspace ("..") and is refused.`);
    await expect(write(path, 'x')).rejects.toThrow(`"${path}" leaves the workspace ("..") and is refused.`);
    await expect(list(path)).rejects.toThrow(`"${path}" leaves the workspace ("..") and is refused.`);
  });

  it('refuses absolute paths', async () => {
    const absolute = join(outside, 'secret.txt');
    await expect(read(absolute)).rejects.toThrow(`"${absolute}" is an absolute path; use a path relative to the workspace.`);
    await expect(write('/x.txt', 'x')).rejects.toThrow('"/x.txt" is an absolute path; use a path relative to the workspace.');
    await expect(list('/')).rejects.toThrow('"/" is an absolute path');
  });

  it('refuses symlinks that resolve outside, for reading, listing and writing', async () => {
    const refusal = (path: string) => `"${path}" resolves outside the workspace (through a symlink) and is refused.`;
    await expect(read('leak.txt')).rejects.toThrow(refusal('leak.txt'));
    await expect(read('escape/secret.txt')).rejects.toThrow(refusal('escape/secret.txt'));
    await expect(list('escape')).rejects.toThrow(refusal('escape'));
    await expect(write('leak.txt', 'overwritten')).rejects.toThrow(refusal('leak.txt'));
    await expect(write('escape/new.txt', 'planted')).rejects.toThrow(refusal('escape/new.txt'));
    await expect(write('escape/deeper/new.txt', 'planted')).rejects.toThrow(refusal('escape/deeper/new.txt'));
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'deeper'))).toBe(false);
  });

  it('follows symlinks that stay inside', async () => {
    expect(await read('todo-link.md')).toBe('- buy milk\n');
    await write('todo-link.md', '- buy bread\n');
    expect(readFileSync(join(workspace, 'notes', 'todo.md'), 'utf8')).toBe('- buy bread\n');
  });

  it('refuses NUL bytes in paths', async () => {
    await expect(read('notes/todo.md\0.png')).rejects.toThrow('the path contains a NUL character.');
  });
});

describe('file tools', () => {
  it('lists a folder with folders marked and file sizes', async () => {
    expect(await list()).toBe(['./ (4 entries)', 'escape (symlink)', 'leak.txt (symlink)', 'notes/', 'todo-link.md (symlink)'].join('\n'));
    expect(await list('notes')).toBe('notes/ (1 entry)\ntodo.md (11 bytes)');
  });

  it('writes, creating folders, and appends', async () => {
    expect(await write('a/b/c.txt', 'hello')).toBe('Wrote 5 bytes to a/b/c.txt.');
    expect(await write('a/b/c.txt', ' world', true)).toBe('Appended 6 bytes to a/b/c.txt.');
    expect(await read('a/b/c.txt')).toBe('hello world');
  });

  it('says clearly what is missing or not a file', async () => {
    await expect(read('nope.txt')).rejects.toThrow('"nope.txt" does not exist in the workspace.');
    await expect(read('notes')).rejects.toThrow('"notes" is not a regular file.');
    await expect(list('notes/todo.md')).rejects.toThrow('"notes/todo.md" is a file, not a folder.');
    await expect(write('notes', 'x')).rejects.toThrow('"notes" is a folder, not a file.');
  });

  it('refuses binary files', async () => {
    writeFileSync(join(workspace, 'image.bin'), Buffer.from([1, 2, 0, 3]));
    await expect(read('image.bin')).rejects.toThrow('"image.bin" looks like a binary file (4 bytes); only text files can be read.');
  });

  it('creates the workspace on first use', async () => {
    const fresh = join(root, 'new-workspace');
    expect(await filesListTool(workspacesAt(fresh)).execute({ path: '.' }, ctx)).toBe('./ (0 entries)');
    expect(existsSync(join(fresh, OWN_WORKSPACE))).toBe(true);
  });

  it('reading and listing are free, writing needs approval unless always allowed', () => {
    expect(filesReadTool(workspaces).requiresApproval({ path: 'x' })).toBe('never');
    expect(filesListTool(workspaces).requiresApproval({ path: 'x' })).toBe('never');
    const writer = filesWriteTool(workspaces);
    expect(writer.requiresApproval({ path: 'x', content: '', append: false })).toBe('unlessAutoApproved');
    expect(writer.describe!({ path: 'x.md', content: 'abc', append: false })).toBe('Write 3 characters into x.md');
  });
});

describe('files_write verification', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
  });
  afterEach(() => cleanup());

  it('accepts a file that holds what was written, after a write and an append', async () => {
    const file = join(dir, 'a.txt');
    writeFileSync(file, 'one\ntwo\n');
    expect(await verifyWrite(file, 'one\ntwo\n')).toBeUndefined();
    expect(await verifyWrite(file, 'two\n', true)).toBeUndefined();
  });

  it('reports a missing file or different content in plain words', async () => {
    expect(await verifyWrite(join(dir, 'gone.txt'), 'x')).toBe('the file is missing right after it was written');
    const file = join(dir, 'b.txt');
    writeFileSync(file, 'changed by someone else');
    expect(await verifyWrite(file, 'what we wrote')).toBe('reading the file back gave different content than was written');
    expect(await verifyWrite(file, 'tail', true)).toBe('reading the file back gave different content than was written');
    expect(await verifyWrite(file, 'changed by someone else', true)).toBeUndefined();
  });

  it('the tool reads back what it wrote, in a new folder and after an append', async () => {
    const writer = filesWriteTool(workspacesAt(dir));
    await writer.execute({ path: 'deep/er/c.md', content: 'héllo\n', append: false }, ctx);
    await expect(writer.execute({ path: 'deep/er/c.md', content: 'more\n', append: true }, ctx)).resolves.toBe('Appended 5 bytes to deep/er/c.md.');
    expect(await verifyWrite(join(dir, OWN_WORKSPACE, 'deep', 'er', 'c.md'), 'héllo\nmore\n')).toBeUndefined();
  });
});
