import { afterEach, describe, expect, it } from 'vitest';
import { createPermissionStore } from '../../src/tools/permissions.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';
import { fakeTool, openStore, tempDir } from './support.js';

const temps: (() => void)[] = [];
afterEach(() => temps.splice(0).forEach((cleanup) => cleanup()));

function catalog(): ReturnType<typeof createToolRegistry> {
  const registry = createToolRegistry();
  const tools: Tool[] = [
    fakeTool({ name: 'reader', readOnly: true }),
    fakeTool({ name: 'writer', readOnly: false, requiresApproval: () => 'unlessAutoApproved' }),
    fakeTool({ name: 'shell', readOnly: false, requiresApproval: () => 'always' }),
  ];
  for (const tool of tools) registry.register(tool);
  return registry;
}

async function fresh() {
  const temp = tempDir();
  temps.push(temp.cleanup);
  const store = await openStore(temp.dir);
  return { dir: temp.dir, store, permissions: createPermissionStore(store, catalog()) };
}

describe('permission store', () => {
  it('seeds read-only tools as alwaysAllow, others and unknown tools as askEachTime', async () => {
    const { store, permissions } = await fresh();
    expect(await permissions.get('u', 'reader')).toBe('alwaysAllow');
    expect(await permissions.get('u', 'writer')).toBe('askEachTime');
    expect(await permissions.get('u', 'shell')).toBe('askEachTime');
    expect(await permissions.get('u', 'not_registered')).toBe('askEachTime');
    await store.close();
  });

  it('refuses alwaysAllow for a tool that always needs approval, and stores nothing', async () => {
    const { store, permissions } = await fresh();
    expect(await permissions.set('u', 'shell', 'alwaysAllow')).toEqual({
      ok: false,
      reason: 'always_requires_approval',
      message: '"shell" asks for approval every time; it cannot be set to always allow.',
    });
    expect(await permissions.get('u', 'shell')).toBe('askEachTime');
    expect(await permissions.set('u', 'shell', 'disabled')).toEqual({ ok: true });
    expect(await permissions.get('u', 'shell')).toBe('disabled');
    await store.close();
  });

  it('keeps permissions per user and lists them with their source', async () => {
    const { store, permissions } = await fresh();
    await permissions.set('alice', 'writer', 'alwaysAllow');
    await permissions.set('alice', 'reader', 'disabled');
    expect(await permissions.get('bob', 'writer')).toBe('askEachTime');
    expect(await permissions.list('alice')).toEqual([
      { tool: 'reader', permission: 'disabled', source: 'user' },
      { tool: 'writer', permission: 'alwaysAllow', source: 'user' },
      { tool: 'shell', permission: 'askEachTime', source: 'default' },
    ]);
    await permissions.reset('alice', 'reader');
    expect(await permissions.get('alice', 'reader')).toBe('alwaysAllow');
    await store.close();
  });

  it('persists: a reopened store reads the same permissions back', async () => {
    const { dir, store, permissions } = await fresh();
    await permissions.set('alice', 'writer', 'alwaysAllow');
    await permissions.set('alice', 'reader', 'disabled');
    await permissions.set('bob', 'writer', 'disabled');
    await permissions.reset('bob', 'writer');
    await store.close();

    const reopened = await openStore(dir);
    const again = createPermissionStore(reopened, catalog());
    expect(await again.get('alice', 'writer')).toBe('alwaysAllow');
    expect(await again.get('alice', 'reader')).toBe('disabled');
    expect(await again.get('bob', 'writer')).toBe('askEachTime');
    await reopened.close();
  });

  it('knows who has choices of their own: added with the first, gone with the last reset', async () => {
    const { store, permissions } = await fresh();
    expect(await permissions.people()).toEqual([]);
    await permissions.set('test:ann', 'writer', 'alwaysAllow');
    await permissions.set('test:bob', 'shell', 'disabled');
    await permissions.set('test:ann', 'shell', 'disabled');
    expect((await permissions.people()).sort()).toEqual(['test:ann', 'test:bob']);
    await permissions.reset('test:bob', 'shell');
    await permissions.reset('test:ann', 'writer');
    expect(await permissions.people()).toEqual(['test:ann']);
    // Another store on the same data reads the same list.
    expect(await createPermissionStore(store, catalog()).people()).toEqual(['test:ann']);
    await store.close();
  });
});
