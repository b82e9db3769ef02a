/**
 * Where each call's files are: a person's own folder in a DM, the
 * conversation's in a group, the owner's for a background job, and the shared
 * folders under `shared/` in every one of them, without a way out.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/config/schema.js';
import { filesListTool } from '../../../src/tools/builtin/files-list.js';
import { filesReadTool } from '../../../src/tools/builtin/files-read.js';
import { filesWriteTool } from '../../../src/tools/builtin/files-write.js';
import { workspaceDirFor, workspaceSettingsOf } from '../../../src/tools/builtin/index.js';
import { folderName, leftoverEntries, type WorkspaceSettings } from '../../../src/tools/builtin/lib/workspaces.js';
import type { ToolContext } from '../../../src/tools/types.js';
import { group, makeContext, tempDir, workspacesAt } from '../support.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir('pincer-workspaces-'));
});
afterEach(() => cleanup());

const alice = makeContext({ userId: 'telegram:1', threadKey: 'telegram:1' });
const bob = makeContext({ userId: 'telegram:2', threadKey: 'telegram:2' });
const inGroup = (userId: string, threadKey = 'telegram:-100') => makeContext({ userId, threadKey, approval: group });
const job = (overrides: Partial<ToolContext> = {}) =>
  makeContext({ userId: 'telegram:1', threadKey: 'job:j1', scope: 'telegram:chat:-100', approval: { kind: 'autonomous', allowed: new Set(['*']) }, ...overrides });

describe('the workspace of a call', () => {
  const config = ConfigSchema.parse({ dataDir: '/srv/pincer' });
  const folder = (ctx: ToolContext) => workspaceDirFor(config, ctx).slice('/srv/pincer/workspace/'.length);

  it("is the person's own in a DM and the conversation's in a group (topics and threads included)", () => {
    expect(folder(alice)).toBe('users/telegram/1');
    expect(folder(makeContext({ userId: 'terminal:owner', threadKey: 'terminal:local', channel: 'terminal' }))).toBe('users/terminal/owner');
    expect(folder(inGroup('telegram:1'))).toBe('chats/telegram/-100');
    expect(folder(inGroup('telegram:2', 'telegram:-100:77'))).toBe('chats/telegram/-100');
  });

  it("is a background job's owner's own, unless its context names the conversation it was created in", () => {
    expect(folder(job())).toBe('users/telegram/1');
    expect(folder(job({ conversation: { channel: 'telegram', chatId: '-100', kind: 'group' } }))).toBe('chats/telegram/-100');
    expect(folder(job({ conversation: { channel: 'telegram', chatId: '1', kind: 'dm' } }))).toBe('users/telegram/1');
  });

  it('names folders after ids that cannot escape, collide or differ only in case', () => {
    expect(folderName('42')).toBe('42');
    expect(folderName('-1001234')).toBe('-1001234');
    for (const id of ['..', '.', '', 'a/b', 'a\\b', 'U01ABC', '../../etc']) {
      expect(folderName(id)).toMatch(/^[a-z0-9_-]*~[0-9a-f]{12}$/);
    }
    const names = ['U01ABC', 'u01abc', 'a/b', 'a_b', 'a:b', '..', '._'].map(folderName);
    expect(new Set(names.map((name) => name.toLowerCase())).size).toBe(names.length);
    expect(folderName('x'.repeat(300)).length).toBeLessThan(60);
  });
});

describe('files across workspaces', () => {
  let settings: WorkspaceSettings;
  beforeEach(() => {
    settings = workspacesAt(join(dir, 'workspace'));
  });
  const read = (path: string, ctx: ToolContext) => filesReadTool(settings).execute({ path }, ctx);
  const write = (path: string, content: string, ctx: ToolContext) => filesWriteTool(settings).execute({ path, content, append: false }, ctx);
  const list = (path: string, ctx: ToolContext) => filesListTool(settings).execute({ path }, ctx);

  it("keeps one person's files from another, and a group's from its members' DMs", async () => {
    await write('todo.txt', 'alice', alice);
    await expect(read('todo.txt', bob)).rejects.toThrow('"todo.txt" does not exist in the workspace.');
    await write('todo.txt', 'bob', bob);
    expect(await read('todo.txt', alice)).toBe('alice');
    expect(await read('todo.txt', bob)).toBe('bob');
    await write('plan.txt', 'group plan', inGroup('telegram:1'));
    expect(await read('plan.txt', inGroup('telegram:2'))).toBe('group plan');
    await expect(read('plan.txt', alice)).rejects.toThrow('does not exist');
    expect(await list('.', bob)).toBe('./ (1 entry)\ntodo.txt (3 bytes)');
  });
});

describe('shared folders', () => {
  let settings: WorkspaceSettings;
  let handbook: string;
  let inbox: string;
  beforeEach(() => {
    handbook = join(dir, 'handbook');
    inbox = join(dir, 'inbox');
    mkdirSync(join(handbook, 'chapters'), { recursive: true });
    mkdirSync(inbox);
    writeFileSync(join(handbook, 'rules.txt'), 'be kind');
    settings = workspacesAt(join(dir, 'workspace'), [
      { name: 'handbook', path: handbook, writable: false },
      { name: 'inbox', path: inbox, writable: true },
    ]);
  });
  const tools = () => ({ read: filesReadTool(settings), write: filesWriteTool(settings), list: filesListTool(settings) });

  it('are readable from every workspace under shared/<name>, and listed there', async () => {
    const { read, list } = tools();
    for (const ctx of [alice, bob, inGroup('telegram:3'), job()]) expect(await read.execute({ path: 'shared/handbook/rules.txt' }, ctx)).toBe('be kind');
    expect(await list.execute({ path: '.' }, alice)).toBe('./ (1 entry)\nshared/ (shared with everyone)');
    expect(await list.execute({ path: 'shared' }, alice)).toBe('shared/ (2 entries)\nhandbook/ (read-only)\ninbox/');
    expect(await list.execute({ path: 'shared/handbook' }, bob)).toBe('shared/handbook/ (2 entries)\nchapters/\nrules.txt (7 bytes)');
  });

  it('are read-only unless writable, refused before anyone is asked', async () => {
    const { write, read } = tools();
    await expect(write.precheck!({ path: 'shared/handbook/rules.txt', content: 'x', append: false }, alice)).rejects.toThrow(
      '"shared/handbook/rules.txt" is in the shared folder "handbook", which is read-only.',
    );
    await expect(write.execute({ path: 'shared/handbook/new.txt', content: 'x', append: false }, alice)).rejects.toThrow('which is read-only');
    expect(existsSync(join(handbook, 'new.txt'))).toBe(false);
    expect(await write.execute({ path: 'shared/inbox/from-alice.txt', content: 'hello', append: false }, alice)).toBe('Wrote 5 bytes to shared/inbox/from-alice.txt.');
    expect(await read.execute({ path: 'shared/inbox/from-alice.txt' }, bob)).toBe('hello');
    await expect(write.execute({ path: 'shared/nope/x.txt', content: 'x', append: false }, alice)).rejects.toThrow('there is no shared folder "nope" (shared folders: handbook, inbox).');
    await expect(write.execute({ path: 'shared', content: 'x', append: false }, alice)).rejects.toThrow('"shared" only holds the shared folders');
  });

  it('give no way out: .., symlinks leading out, and the workspaces when the whole folder is shared', async () => {
    const { read, write } = tools();
    await write.execute({ path: 'secret.txt', content: 'alice only', append: false }, alice);
    await expect(read.execute({ path: 'shared/handbook/../../workspace/users/telegram/1/secret.txt' }, bob)).rejects.toThrow('leaves the workspace');
    symlinkSync(join(dir, 'workspace', 'users'), join(handbook, 'people'));
    await expect(read.execute({ path: 'shared/handbook/people/telegram/1/secret.txt' }, bob)).rejects.toThrow('resolves outside the workspace');

    // The old single workspace, shared as it is: its users/ and chats/ stay hidden, whatever the path.
    settings = { ...workspaceSettingsOf(ConfigSchema.parse({ dataDir: dir })) };
    settings = { ...settings, shared: [{ name: 'old', path: settings.root, writable: true }] };
    writeFileSync(join(settings.root, 'old-notes.txt'), 'from before');
    const shared = tools();
    expect(await shared.read.execute({ path: 'shared/old/old-notes.txt' }, bob)).toBe('from before');
    expect(await shared.list.execute({ path: 'shared/old' }, bob)).toBe('shared/old/ (1 entry)\nold-notes.txt (11 bytes)');
    await expect(shared.read.execute({ path: 'shared/old/users/telegram/1/secret.txt' }, bob)).rejects.toThrow('"shared/old/users/telegram/1/secret.txt" does not exist in the workspace.');
    await expect(shared.write.execute({ path: 'shared/old/users/telegram/1/secret.txt', content: 'x', append: false }, bob)).rejects.toThrow('does not exist');
    expect(readFileSync(join(settings.root, 'users', 'telegram', '1', 'secret.txt'), 'utf8')).toBe('alice only');
  });
});

describe('shared folders that are private folders', () => {
  it('show nothing of the data folder itself, and all of a folder inside a workspace', async () => {
    const settings = workspaceSettingsOf(ConfigSchema.parse({ dataDir: dir }));
    const own = join(settings.root, 'users', 'telegram', '1', 'public');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'recipe.txt'), 'pancakes');
    writeFileSync(join(dir, 'pincer.sqlite'), 'every conversation');
    settings.shared = [
      { name: 'data', path: dir, writable: false },
      { name: 'alice', path: own, writable: false },
    ];
    const read = filesReadTool(settings);
    await expect(read.execute({ path: 'shared/data/pincer.sqlite' }, bob)).rejects.toThrow('"shared/data/pincer.sqlite" does not exist in the workspace.');
    expect(await read.execute({ path: 'shared/alice/recipe.txt' }, bob)).toBe('pancakes');
  });
});

describe('files left by the one shared workspace of older versions', () => {
  it('are found at the top of the workspaces, beside users/ and chats/', async () => {
    const root = join(dir, 'workspace');
    expect(await leftoverEntries(root)).toEqual([]);
    mkdirSync(join(root, 'users'), { recursive: true });
    mkdirSync(join(root, 'notes'));
    writeFileSync(join(root, 'todo.txt'), 'x');
    expect(await leftoverEntries(root)).toEqual(['notes', 'todo.txt']);
  });
});
