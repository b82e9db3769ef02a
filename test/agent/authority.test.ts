import { describe, expect, it } from 'vitest';
import { Authority } from '../../src/chat/authority.js';
import type { Channel } from '../../src/channels/types.js';
import { silentLogger } from '../../src/log.js';
import { TEST_CAPABILITIES, TestChannel, testDm, testGroup } from '../support/test-channel.js';
import { TERMINAL_CAPABILITIES } from '../../src/channels/terminal/adapter.js';

const config = { owners: ['test:olga'], admins: ['test:adam'] };

describe('authority', () => {
  const channel = new TestChannel();
  const authority = new Authority(config, (name) => (name === 'test' ? channel : undefined), silentLogger);

  it('knows owners, configured admins, group admins and members', async () => {
    const group = testGroup('g1');
    expect(await authority.roleOf(testDm('olga'), 'olga')).toBe('owner');
    expect(await authority.roleOf(group, 'adam')).toBe('admin');
    expect(authority.isBotAdmin('test', 'adam')).toBe(true);
    expect(await authority.roleOf(testDm('mia'), 'mia')).toBe('member');
    expect(authority.isBotAdmin('test', 'mia')).toBe(false);
  });

  it('counts the platform admins of a group, and a failing check as no', async () => {
    const group = testGroup('g2');
    const platform = (isAdmin: (chat: unknown, id: string) => Promise<boolean>) => ({ name: 'test', capabilities: TEST_CAPABILITIES, isAdmin }) as unknown as Channel;
    const admins = new Authority(config, () => platform(async (_chat, id) => id === 'gina'), silentLogger);
    expect(await admins.isChatAdmin(group, 'gina')).toBe(true);
    expect(await admins.isChatAdmin(testDm('gina'), 'gina')).toBe(false);
    const failing = new Authority(config, () => platform(async () => Promise.reject(new Error('429'))), silentLogger);
    expect(await failing.isChatAdmin(group, 'gina')).toBe(false);
  });

  it('allows a command by its `who`: everyone, admins of the chat, owners', async () => {
    const group = testGroup('g3');
    expect(await authority.allows('everyone', group, 'mia')).toBe(true);
    expect(await authority.allows('admin', group, 'mia')).toBe(false);
    expect(await authority.allows('admin', group, 'adam')).toBe(true);
    expect(await authority.allows('owner', group, 'adam')).toBe(false);
    expect(await authority.allows('owner', testDm('olga'), 'olga')).toBe(true);
  });

  it('treats the one user of a local-operator channel as an owner, whatever its name', () => {
    const local = { name: 'console', capabilities: TERMINAL_CAPABILITIES } as unknown as Channel;
    const byCapability = new Authority({ owners: [], admins: [] }, () => local, silentLogger);
    expect(byCapability.isOwner('console', 'anyone')).toBe(true);
    expect(authority.isOwner('test', 'anyone')).toBe(false);
  });
});
