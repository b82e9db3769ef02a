import { describe, expect, it } from 'vitest';
import { admits, allowlists, openDmWarning, ownerIdsOn, type AccessRequest, type Allowlists } from '../../src/channels/access.js';

/*
 * The rule as a table. People: `me` and `you` (listed or not), `boss` (an
 * owner). Places: DMs; groups `g1` (listed when a conversation list is set),
 * `g2`; thread `t1` of `g1`; workspaces `w1` (listed), `w2`.
 */
const dm = (userId: string, workspaceId: string | null = null): AccessRequest => ({ kind: 'dm', userId, workspaceId, conversationId: `dm-${userId}` });
const group = (userId: string, conversationId: string, extra: Partial<AccessRequest> = {}): AccessRequest => ({
  kind: 'group',
  userId,
  conversationId,
  ...extra,
});

type Row = [string, Partial<Allowlists>, AccessRequest, boolean];

const ROWS: Row[] = [
  // No list: everyone, everywhere.
  ['no lists: a DM', {}, dm('you'), true],
  ['no lists: a group', {}, group('you', 'g2'), true],
  ['no lists: a group of any workspace', {}, group('you', 'g2', { workspaceId: 'w2' }), true],

  // The user list alone: in DMs and in every group.
  ['users: a listed user in a DM', { users: ['me'] }, dm('me'), true],
  ['users: an unlisted user in a DM', { users: ['me'] }, dm('you'), false],
  ['users: a listed user in any group', { users: ['me'] }, group('me', 'g2'), true],
  ['users: an unlisted user in a group', { users: ['me'] }, group('you', 'g1'), false],

  // Owners count as listed users; they never restrict anyone.
  ['owners: an owner missing from the user list, in a DM', { users: ['me'], owners: ['boss'] }, dm('boss'), true],
  ['owners: an owner missing from the user list, in a group', { users: ['me'], owners: ['boss'] }, group('boss', 'g2'), true],
  ['owners: with no user list, anyone', { owners: ['boss'] }, dm('you'), true],
  ['owners: still need a listed group', { users: ['me'], conversations: ['g1'], owners: ['boss'] }, group('boss', 'g2'), false],
  ['owners: in a listed group', { users: ['me'], conversations: ['g1'], owners: ['boss'] }, group('boss', 'g1'), true],

  // The conversation list alone: groups only; DMs are the user list's.
  ['conversations: anyone in a listed group', { conversations: ['g1'] }, group('you', 'g1'), true],
  ['conversations: an unlisted group', { conversations: ['g1'] }, group('you', 'g2'), false],
  ['conversations: a DM is not governed by it', { conversations: ['g1'] }, dm('you'), true],
  ['conversations: a thread of a listed channel', { conversations: ['g1'] }, group('you', 't1', { parentId: 'g1' }), true],
  ['conversations: a listed thread', { conversations: ['t1'] }, group('you', 't1', { parentId: 'g2' }), true],
  ['conversations: a thread of an unlisted channel', { conversations: ['g1'] }, group('you', 't2', { parentId: 'g2' }), false],
  ['conversations: a thread with no parent known', { conversations: ['g1'] }, group('you', 't2', { parentId: null }), false],

  // The workspace list alone: groups, and DMs that belong to a workspace (Slack).
  ['workspaces: a group of a listed workspace', { workspaces: ['w1'] }, group('you', 'g2', { workspaceId: 'w1' }), true],
  ['workspaces: a group of another workspace', { workspaces: ['w1'] }, group('you', 'g1', { workspaceId: 'w2' }), false],
  ['workspaces: a group whose workspace is unknown', { workspaces: ['w1'] }, group('you', 'g1'), false],
  ['workspaces: a DM of no workspace (Discord)', { workspaces: ['w1'] }, dm('you', null), true],
  ['workspaces: a DM of a listed workspace (Slack)', { workspaces: ['w1'] }, dm('you', 'w1'), true],
  ['workspaces: a DM of another workspace (Slack)', { workspaces: ['w1'] }, dm('you', 'w2'), false],
  ['workspaces: a DM whose workspace is unknown', { workspaces: ['w1'] }, { kind: 'dm', userId: 'you', conversationId: 'dm-you' }, false],

  // Users and conversations: both must admit (the AND rule).
  ['users + conversations: a listed user in a listed group', { users: ['me'], conversations: ['g1'] }, group('me', 'g1'), true],
  ['users + conversations: a listed user in an unlisted group', { users: ['me'], conversations: ['g1'] }, group('me', 'g2'), false],
  ['users + conversations: an unlisted user in a listed group', { users: ['me'], conversations: ['g1'] }, group('you', 'g1'), false],
  ['users + conversations: a listed user in a DM', { users: ['me'], conversations: ['g1'] }, dm('me'), true],
  ['users + conversations: an unlisted user in a DM', { users: ['me'], conversations: ['g1'] }, dm('you'), false],

  // All three lists.
  ['all: listed everything', { users: ['me'], workspaces: ['w1'], conversations: ['g1'] }, group('me', 'g1', { workspaceId: 'w1' }), true],
  ['all: a listed channel id in another workspace', { users: ['me'], workspaces: ['w1'], conversations: ['g1'] }, group('me', 'g1', { workspaceId: 'w2' }), false],
  ['all: a thread of a listed channel', { users: ['me'], workspaces: ['w1'], conversations: ['g1'] }, group('me', 't1', { workspaceId: 'w1', parentId: 'g1' }), true],
  ['all: a listed user in a Discord DM', { users: ['me'], workspaces: ['w1'], conversations: ['g1'] }, dm('me', null), true],
  ['all: an unlisted user in a listed place', { users: ['me'], workspaces: ['w1'], conversations: ['g1'] }, group('you', 'g1', { workspaceId: 'w1' }), false],
];

describe('the access rule', () => {
  it.each(ROWS)('%s', (_name, lists, request, expected) => {
    expect(admits(allowlists(lists), request)).toBe(expected);
  });
});

describe('allowlists', () => {
  it('trims ids and drops blank ones, so a list of blanks admits everyone', () => {
    const lists = allowlists({ users: [' 42 ', ''], conversations: ['  '] });
    expect(lists).toEqual({ users: ['42'], workspaces: [], conversations: [], owners: [] });
    expect(admits(lists, dm('42'))).toBe(true);
    expect(admits(lists, group('42', 'anywhere'))).toBe(true);
    expect(admits(lists, dm('7'))).toBe(false);
  });
});

describe('ownerIdsOn', () => {
  it('keeps the ids of one platform', () => {
    expect(ownerIdsOn(['telegram:42', 'discord:1234', 'slack:U01', 'telegram:7'], 'telegram')).toEqual(['42', '7']);
    expect(ownerIdsOn(['telegramx:1'], 'telegram')).toEqual([]);
    expect(ownerIdsOn([], 'slack')).toEqual([]);
  });
});

describe('openDmWarning', () => {
  it('warns when groups are closed by a conversation list but DMs are open to everyone', () => {
    expect(openDmWarning(allowlists({ conversations: ['g1'] }))).toMatch(/direct messages are open to everyone/);
    expect(openDmWarning(allowlists({ conversations: ['g1'], owners: ['boss'] }))).toBeDefined();
    expect(openDmWarning(allowlists({ conversations: ['g1'], users: ['me'] }))).toBeUndefined();
    expect(openDmWarning(allowlists({ workspaces: ['w1'] }))).toBeUndefined();
    expect(openDmWarning(allowlists({}))).toBeUndefined();
  });
});
