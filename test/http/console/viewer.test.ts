/**
 * The console's access rule as a truth table: who sees which conversation,
 * job or routine, and which policy scopes.
 */
import { describe, expect, it } from 'vitest';
import { policyScopes, seesConversation, seesWork, type Viewer } from '../../../src/http/console/viewer.js';

const owner: Viewer = { userId: 'test:owner', name: 'Owner', role: 'owner', allGroups: true, scopes: [] };
const botAdmin: Viewer = { userId: 'test:ada', name: 'Ada', role: 'admin', allGroups: true, scopes: [] };
const groupAdmin: Viewer = { userId: 'test:alice', name: 'Alice', role: 'admin', allGroups: false, scopes: ['test:group:g1'] };

const dm = { kind: 'dm' as const, scope: 'global' };
const g1 = { kind: 'group' as const, scope: 'test:group:g1' };
const g2 = { kind: 'group' as const, scope: 'test:group:g2' };

describe('what a viewer sees', () => {
  it.each([
    ['owner', owner, dm, true],
    ['owner', owner, g2, true],
    ['configured admin', botAdmin, dm, false],
    ['configured admin', botAdmin, g2, true],
    ['group admin', groupAdmin, g1, true],
    ['group admin', groupAdmin, g2, false],
    ['group admin', groupAdmin, dm, false],
  ])('%s: a %o conversation -> %s', (_who, viewer, chat, seen) => {
    expect(seesConversation(viewer, chat)).toBe(seen);
  });

  it('shows a person their own jobs wherever they were made, and others only where they administer', () => {
    expect(seesWork(groupAdmin, { owner: 'test:alice', origin: dm })).toBe(true);
    expect(seesWork(groupAdmin, { owner: 'test:bob', origin: dm })).toBe(false);
    expect(seesWork(groupAdmin, { owner: 'test:bob', origin: g1 })).toBe(true);
    expect(seesWork(groupAdmin, { owner: 'test:bob', origin: g2 })).toBe(false);
  });

  it('gives the global policy to owners and configured admins only', () => {
    const known = ['test:group:g1', 'test:group:g2'];
    expect(policyScopes(owner, known)).toEqual(['global', ...known]);
    expect(policyScopes(botAdmin, known)).toEqual(['global', ...known]);
    expect(policyScopes(groupAdmin, known)).toEqual(['test:group:g1']);
  });
});
