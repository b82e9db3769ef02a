import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../src/errors.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { Permission, PolicyMode } from '../../src/tools/types.js';
import { fakeTool } from './support.js';

const sources = (policy: Record<string, PolicyMode> = {}, permissions: Record<string, Permission> = {}) => ({
  policy: { modesIn: async () => (tool: string) => policy[tool] ?? 'allow' },
  permissions: { of: async () => (tool: string) => permissions[tool] ?? 'askEachTime' },
});

describe('tool registry', () => {
  it('registers, looks up and lists tools in order', () => {
    const registry = createToolRegistry();
    registry.register(fakeTool({ name: 'b' }));
    registry.register(fakeTool({ name: 'a' }));
    expect(registry.names()).toEqual(['b', 'a']);
    expect(registry.get('a')?.tool.name).toBe('a');
    expect(registry.get('zzz')).toBeUndefined();
  });

  it('refuses duplicate names, names a provider would reject, and non-object schemas', () => {
    const registry = createToolRegistry();
    registry.register(fakeTool({ name: 'a' }));
    expect(() => registry.register(fakeTool({ name: 'a' }))).toThrow(ConfigError);
    expect(() => registry.register(fakeTool({ name: 'has space' }))).toThrow(/use 1-64 letters/);
    expect(() => registry.register(fakeTool({ name: 'num', parameters: z.number() }))).toThrow(/must be a zod object schema/);
  });

  it('gives JSON Schema without $schema, fields with defaults optional', async () => {
    const registry = createToolRegistry();
    registry.register(fakeTool({ name: 't', parameters: z.object({ q: z.string().describe('query'), n: z.number().default(3) }) }));
    const [definition] = await registry.definitionsFor({ userId: 'u', scope: 'global', approval: { kind: 'chat', chatKind: 'dm' } }, sources());
    expect(definition).toEqual({
      name: 't',
      description: 'test tool t',
      parameters: { type: 'object', properties: { q: { type: 'string', description: 'query' }, n: { type: 'number', default: 3 } }, required: ['q'] },
    });
  });

  it('hides tools disabled by policy or by the user, and those a background job may not run', async () => {
    const registry = createToolRegistry();
    for (const name of ['a', 'b', 'c', 'd']) registry.register(fakeTool({ name }));
    registry.register(fakeTool({ name: 'e', requiresApproval: () => 'always' }));
    const dm = { userId: 'u', scope: 'global', approval: { kind: 'chat', chatKind: 'dm' } } as const;
    const names = async (viewer: Parameters<typeof registry.definitionsFor>[0], s = sources()) =>
      (await registry.definitionsFor(viewer, s)).map((d) => d.name);
    expect(await names(dm, sources({ b: 'disable', c: 'ask' }, { d: 'disabled' }))).toEqual(['a', 'c', 'e']);
    const job = { ...dm, approval: { kind: 'autonomous' as const, allowed: new Set(['a', 'b', 'c', 'e']), denylist: new Set(['a']) } };
    expect(await names(job)).toEqual(['b', 'c']);
    // A stored "*" grants nothing; a tool that asks each time is offered only to a job that may ask its owner.
    expect(await names({ ...dm, approval: { kind: 'autonomous' as const, allowed: new Set(['*']) } })).toEqual([]);
    const asking = { ...dm, approval: { kind: 'autonomous' as const, allowed: new Set(['e']), askOwner: true } };
    expect(await names(asking)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
