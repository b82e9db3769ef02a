/**
 * The console's pages about the bot as a whole, over plain HTTP: the MCP
 * servers and their restart (owners only, through `/mcp restart`), usage per
 * person and day, and each person's own tool choices; what each kind of
 * viewer sees and may do.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import { dayOf } from '../../../src/engine/usage.js';
import { flushDb, testRedisDb } from '../../e2e/cluster-harness.js';
import { testDm, testGroup } from '../../support/test-channel.js';
import { FIXTURE } from '../../mcp/chat.js';
import { signIn, startConsoleRig, type ConsoleRig } from './rig.js';
import { signInTool } from './support.js';

/** Database 12 of the test Redis: this suite's own, emptied before its test. */
const redis = testRedisDb(12);

let rig: ConsoleRig | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Sends a message and waits until the app is idle. */
async function say(r: ConsoleRig, chat: ReturnType<typeof testDm>, userId: string, text: string, mentionsBot?: boolean): Promise<void> {
  const before = r.platform.messagesIn(chat).length;
  r.platform.channel.userMessage({ chat, sender: { id: userId, name: userId }, text, ...(mentionsBot === undefined ? {} : { mentionsBot }) });
  await r.platform.waitFor(() => r.platform.messagesIn(chat).length > before && r.app.runtime.health().activeThreads === 0, 5_000, 'the answer');
  await r.app.runtime.idle();
}

/** Our fixture MCP server over stdio, noting each start in a file. */
function fixtureServer() {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-console-mcp-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'events.log');
  return {
    starts: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((line) => line === 'started').length : 0),
    config: { command: process.execPath, args: ['--import', 'tsx', FIXTURE], env: { FIXTURE_LOG: log }, approval: 'never' as const },
  };
}

interface McpView {
  mayRestart: boolean;
  servers: Array<{ name: string; state: string; transport: string; tools: string[]; lastError?: string }>;
}

describe('MCP servers', () => {
  it('shows each server\'s state, transport and tools; an owner restarts one through /mcp restart, with the CSRF token; admins may not', async () => {
    const fix = fixtureServer();
    rig = await startConsoleRig({ config: { admins: ['test:ada'], mcp: { servers: { fix: fix.config } } } });
    const r = rig;
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    await say(r, testGroup('g1'), 'alice', 'hello', true);
    const owner = await signIn(r, 'owner');
    const view = (await (await owner.get('/console/api/mcp')).json()) as McpView;
    expect(view.mayRestart).toBe(true);
    expect(view.servers).toEqual([{ name: 'fix', state: 'ready', transport: 'stdio', tools: expect.arrayContaining(['fix__slow', 'fix__crash', 'fix__add_tool']) }]);
    expect(fix.starts()).toBe(1);

    expect((await owner.post('/console/api/mcp/fix/restart', {}, { csrf: null })).status).toBe(403);
    expect((await owner.post('/console/api/mcp/fix/restart', {}, { origin: 'http://evil.example' })).status).toBe(403);
    expect(fix.starts()).toBe(1);
    const restarted = await owner.post('/console/api/mcp/fix/restart', {});
    expect(restarted.status).toBe(200);
    expect(await restarted.json()).toEqual({ text: 'Restarted fix: ready, 4 tools.' });
    expect(fix.starts()).toBe(2);
    const unknown = await owner.post('/console/api/mcp/nosuch/restart', {});
    expect(((await unknown.json()) as { text: string }).text).toContain('No MCP server is called "nosuch"');

    const ada = await signIn(r, 'ada');
    expect(((await (await ada.get('/console/api/mcp')).json()) as McpView).mayRestart).toBe(false);
    const alice = await signIn(r, 'alice');
    const seenByAlice = (await (await alice.get('/console/api/mcp')).json()) as McpView;
    expect(seenByAlice).toMatchObject({ mayRestart: false, servers: [{ name: 'fix', state: 'ready' }] });
    for (const refused of [ada, alice]) {
      const answer = await refused.post('/console/api/mcp/fix/restart', {});
      expect(answer.status).toBe(403);
      expect(await answer.json()).toEqual({ error: 'only an owner can restart an MCP server' });
    }
    expect(fix.starts()).toBe(2);
  }, 60_000);
});

interface UsageRow {
  day: string;
  userId: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

describe('usage per person and day', () => {
  it('shows owners and configured admins everyone\'s calls, tokens and cost by day; a group admin their own only', async () => {
    rig = await startConsoleRig({ config: { admins: ['test:ada'], llm: { prices: { 'fake-model': { input: 1, output: 2 } } } } });
    const r = rig;
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    await say(r, testGroup('g1'), 'alice', 'hello from alice', true);
    await say(r, testGroup('g1'), 'bob', 'hello from bob', true);
    await say(r, testGroup('g1'), 'bob', 'again from bob', true);
    await say(r, testDm('carol'), 'carol', 'hello from carol');
    const today = dayOf(Date.now());
    const rowsOf = async (client: Awaited<ReturnType<typeof signIn>>) => {
      const body = (await (await client.get('/console/api/usage')).json()) as { everyone: boolean; days: number; rows: UsageRow[] };
      return { ...body, byUser: new Map(body.rows.map((row) => [row.userId, row])) };
    };
    const owner = await rowsOf(await signIn(r, 'owner'));
    expect(owner).toMatchObject({ everyone: true, days: 14 });
    expect([...owner.byUser.keys()].sort()).toEqual(['test:alice', 'test:bob', 'test:carol']);
    const bob = owner.byUser.get('test:bob')!;
    expect(bob).toMatchObject({ day: today, calls: 2 });
    expect(bob.inputTokens).toBeGreaterThan(0);
    expect(bob.outputTokens).toBeGreaterThan(0);
    expect(bob.costUsd).toBeCloseTo((bob.inputTokens * 1 + bob.outputTokens * 2) / 1_000_000, 10);
    expect(owner.byUser.get('test:alice')).toMatchObject({ calls: 1 });

    const ada = await rowsOf(await signIn(r, 'ada'));
    expect(ada.everyone).toBe(true);
    expect([...ada.byUser.keys()].sort()).toEqual(['test:alice', 'test:bob', 'test:carol']);
    const alice = await rowsOf(await signIn(r, 'alice'));
    expect(alice.everyone).toBe(false);
    expect(alice.rows).toEqual([expect.objectContaining({ userId: 'test:alice', day: today, calls: 1 })]);
  }, 30_000);
});

describe('people\'s own tool choices', () => {
  it('lists each person\'s Always allow and disabled tools to owners and configured admins, and refuses a group admin', async () => {
    rig = await startConsoleRig({ config: { admins: ['test:ada'] }, tools: [signInTool()] });
    const r = rig;
    const { permissions } = r.app.services;
    await permissions.set('test:carol', 'sign_in_site', 'alwaysAllow');
    await permissions.set('test:dan', 'sign_in_site', 'disabled');
    await permissions.set('test:erin', 'sign_in_site', 'askEachTime');
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    await say(r, testGroup('g1'), 'alice', 'hello', true);
    const expected = [
      { userId: 'test:carol', tools: [{ tool: 'sign_in_site', choice: 'always allowed' }] },
      { userId: 'test:dan', tools: [{ tool: 'sign_in_site', choice: 'disabled' }] },
    ];
    for (const who of ['owner', 'ada']) {
      const client = await signIn(r, who);
      expect(await (await client.get('/console/api/permissions')).json()).toEqual(expected);
    }
    const alice = await signIn(r, 'alice');
    expect((await alice.get('/console/api/permissions')).status).toBe(403);
    expect(((await (await alice.get('/console/api/session')).json()) as { seesEveryone: boolean }).seesEveryone).toBe(false);
    // Read-only: there is no way to change another person's choice from the console.
    const owner = await signIn(r, 'owner');
    expect((await owner.post('/console/api/permissions', { userId: 'test:carol', tool: 'sign_in_site' })).status).toBe(404);
  }, 30_000);
});

interface InstancesView {
  instances: { shared: boolean; list: Array<{ id: string; channels: string[]; self: boolean }> };
}

describe('instances on the overview', () => {
  it('says one instance when the bot runs alone', async () => {
    rig = await startConsoleRig();
    const owner = await signIn(rig, 'owner');
    expect(((await (await owner.get('/console/api/overview')).json()) as InstancesView).instances).toEqual({ shared: false, list: [] });
  });

  it.skipIf(!redis.available)(`lists the instances sharing Redis, with the channels each runs${redis.skip}`, async () => {
    await flushDb(redis.url());
    rig = await startConsoleRig({ config: { storeUrl: redis.url(), cluster: { instanceId: 'alpha', leaseTtlMs: 2_000 } } });
    const r = rig;
    // Signed in first: the other instance, without the console, could take the /console message.
    const owner = await signIn(r, 'owner');
    const dir = mkdtempSync(join(tmpdir(), 'pincer-console-beta-'));
    const config = parseConfig({ dataDir: dir, storeUrl: redis.url(), owners: ['test:owner'], cluster: { instanceId: 'beta', leaseTtlMs: 2_000 }, llm: { baseUrl: r.llm.url, model: 'fake-model', maxRetries: 0, stream: false } });
    const beta = await createApp({ config, channels: [{ name: 'test', create: (deps) => r.platform.createChannel(deps) }] });
    await beta.start();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    try {
      const read = async () => ((await (await owner.get('/console/api/overview')).json()) as InstancesView).instances;
      expect(await read()).toEqual({
        shared: true,
        list: [
          { id: 'alpha', channels: ['test'], self: true },
          { id: 'beta', channels: ['test'], self: false },
        ],
      });
      await beta.stop('test over');
      expect((await read()).list.map((instance) => instance.id)).toEqual(['alpha']);
    } finally {
      await beta.stop('test over');
    }
  }, 30_000);
});

