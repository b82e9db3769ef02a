import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createAuditLog } from '../../src/tools/audit.js';
import { createPolicyStore } from '../../src/tools/policy.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { Store } from '../../src/store/store.js';
import { fakeTool, openStore, tempDir } from './support.js';

const temps: (() => void)[] = [];
afterEach(() => temps.splice(0).forEach((cleanup) => cleanup()));

function registry() {
  const r = createToolRegistry();
  for (const name of ['shell', 'http_fetch', 'time']) r.register(fakeTool({ name }));
  return r;
}

function policyOver(store: Store, now = () => 1_700_000_000_000) {
  const audit = createAuditLog(store, { log: silentLogger });
  return { audit, policy: createPolicyStore({ store, catalog: registry(), audit, now }) };
}

async function fresh() {
  const temp = tempDir();
  temps.push(temp.cleanup);
  const store = await openStore(temp.dir);
  return { dir: temp.dir, store, ...policyOver(store) };
}

describe('policy store', () => {
  it('effective mode: scope setting, else global setting, else allow', async () => {
    const { store, policy } = await fresh();
    expect(await policy.effective('shell', 'discord:guild:1')).toBe('allow');
    await policy.set('shell', 'global', 'ask', 'discord:9');
    expect(await policy.effective('shell', 'discord:guild:1')).toBe('ask');
    await policy.set('shell', 'discord:guild:1', 'disable', 'discord:9');
    expect(await policy.effective('shell', 'discord:guild:1')).toBe('disable');
    expect(await policy.effective('shell', 'telegram:chat:-100')).toBe('ask');
    // An explicit allow in a scope overrides a global setting.
    await policy.set('shell', 'slack:team:T1', 'allow', 'slack:U1');
    expect(await policy.effective('shell', 'slack:team:T1')).toBe('allow');
    await policy.reset('shell', 'discord:guild:1', 'discord:9');
    expect(await policy.effective('shell', 'discord:guild:1')).toBe('ask');
    await store.close();
  });

  it('lists every tool with its effective mode and where it comes from', async () => {
    const { store, policy } = await fresh();
    await policy.set('shell', 'global', 'disable', 'owner');
    await policy.set('http_fetch', 'telegram:chat:-100', 'ask', 'telegram:5');
    const list = await policy.list('telegram:chat:-100');
    expect(list.map(({ tool, mode, source }) => ({ tool, mode, source }))).toEqual([
      { tool: 'shell', mode: 'disable', source: 'global' },
      { tool: 'http_fetch', mode: 'ask', source: 'scope' },
      { tool: 'time', mode: 'allow', source: 'default' },
    ]);
    expect(list[1]!.setting).toEqual({ mode: 'ask', by: 'telegram:5', at: 1_700_000_000_000 });
    await store.close();
  });

  it('refuses an unknown tool or a malformed scope and changes nothing', async () => {
    const { store, policy, audit } = await fresh();
    expect(await policy.set('shel', 'global', 'disable', 'a')).toEqual({
      ok: false,
      message: 'There is no tool named "shel". Known tools: shell, http_fetch, time.',
    });
    expect(await policy.set('shell', 'my guild', 'disable', 'a')).toEqual({
      ok: false,
      message: '"my guild" is not a policy scope. Use "global" or a scope such as "discord:guild:123".',
    });
    expect(await policy.effective('shell', 'global')).toBe('allow');
    expect(await audit.recent()).toEqual([]);
    await store.close();
  });

  it('writes an audit record for each change: who, what, where, when', async () => {
    const { store, policy, audit } = await fresh();
    await policy.set('shell', 'discord:guild:1', 'disable', 'discord:42');
    await policy.reset('shell', 'discord:guild:1', 'discord:43');
    expect(await audit.recent()).toEqual([
      { kind: 'policy', tool: 'shell', scope: 'discord:guild:1', mode: 'reset', by: 'discord:43', at: 1_700_000_000_000 },
      { kind: 'policy', tool: 'shell', scope: 'discord:guild:1', mode: 'disable', by: 'discord:42', at: 1_700_000_000_000 },
    ]);
    await store.close();
  });

  it('serves reads from memory and sees its own writes at once', async () => {
    const { store, policy } = await fresh();
    await policy.effective('time', 'global');
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) await policy.effective('time', 'discord:guild:1');
    // Ten thousand reads from SQLite would take seconds; from memory they take milliseconds.
    expect(performance.now() - started).toBeLessThan(1000);
    await policy.set('time', 'discord:guild:1', 'disable', 'admin');
    expect(await policy.effective('time', 'discord:guild:1')).toBe('disable');
    await store.close();
  });

  it('persists: a reopened store reads the same policy and audit back', async () => {
    const { dir, store, policy } = await fresh();
    await policy.set('shell', 'global', 'disable', 'owner');
    await policy.set('http_fetch', 'discord:guild:1', 'ask', 'discord:42');
    await store.close();

    const reopened = await openStore(dir);
    const again = policyOver(reopened);
    expect(await again.policy.effective('shell', 'slack:team:T1')).toBe('disable');
    expect(await again.policy.effective('http_fetch', 'discord:guild:1')).toBe('ask');
    expect(await again.policy.effective('http_fetch', 'global')).toBe('allow');
    expect((await again.audit.recent()).map((r) => r.tool)).toEqual(['http_fetch', 'shell']);
    await reopened.close();
  });
});
