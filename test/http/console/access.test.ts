/**
 * The console's access rules over plain HTTP (no browser): off unless turned
 * on; one-time links from `/console` in a DM; sessions in HttpOnly,
 * SameSite=Strict cookies; CSRF tokens on changes; a strict CSP; admins kept
 * to their groups; no secret and no stack trace on any answer.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../../src/store/store.js';
import { createAuditLog } from '../../../src/tools/audit.js';
import { silentLogger } from '../../../src/log.js';
import { LINK_TTL_MS, SignInLinks } from '../../../src/http/console/sign-in-links.js';
import { startAppRig, type AppRig } from '../../support/app-rig.js';
import { freePort } from '../../support/ports.js';
import { testDm, testGroup } from '../../support/test-channel.js';
import { linkFor, signIn, startConsoleRig, useLink, type ConsoleRig } from './rig.js';
import { loginModel, PASSWORD, signInTool } from './support.js';
import { reminderRecord } from '../../routines/records.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const API_KEY = 'sk-test-console-0123456789abcdefghijklmnop';

let rig: ConsoleRig | AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Starts the console rig with the login tool and model, an admin list and an API key to keep secret. */
async function start(config: { admins?: string[] } = {}): Promise<ConsoleRig> {
  const started = await startConsoleRig({ config: { ...config, llm: { apiKey: API_KEY } }, tools: [signInTool()], responder: loginModel });
  rig = started;
  return started;
}

/** Sends a message and waits until the app is idle. */
async function say(r: AppRig, chat: ReturnType<typeof testDm>, userId: string, text: string, mentionsBot?: boolean): Promise<void> {
  r.platform.channel.userMessage({ chat, sender: { id: userId, name: userId }, text, ...(mentionsBot === undefined ? {} : { mentionsBot }) });
  await r.platform.waitFor(() => r.platform.messagesIn(chat).some((m) => !m.text.startsWith('⏳')) && r.app.runtime.health().activeThreads === 0, 5_000, 'the answer');
  await r.app.runtime.idle();
}

describe('the console is off unless turned on', () => {
  it('serves nothing under /console and knows no /console command by default', async () => {
    const port = await freePort();
    const plain = await startAppRig({ config: { http: { port, host: '127.0.0.1' } } });
    rig = plain;
    expect((await fetch(`http://127.0.0.1:${port}/console/`)).status).toBe(404);
    const chat = testDm('owner');
    plain.platform.channel.userMessage({ chat, sender: { id: 'owner', name: 'Owner' }, text: '/console' });
    const reply = await plain.platform.waitFor(() => plain.platform.lastMessage(chat), 5_000);
    expect(reply.text).toContain('Unknown command /console');
  });
});

describe('signing in with a one-time link', () => {
  it('gives an owner a link in a DM; the link page asks for a click, sets a strict session cookie, and works once', async () => {
    const r = await start();
    const link = await linkFor(r, 'owner');
    expect(link.startsWith(`${r.base}/console/sign-in?t=`)).toBe(true);

    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Sign in');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    // Fetching the page (a link preview does) does not use the link.
    const first = await useLink(link);
    expect(first.status).toBe(303);
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^pincer_console=[\w-]+;/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toMatch(/Max-Age=\d+/);

    const shell = await fetch(`${r.base}/console/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(shell.status).toBe(200);
    const shellHtml = await shell.text();
    expect(shellHtml).toMatch(/<script type="module" src="\/console\/assets\/app-\w+\.js"><\/script>/);

    const again = await useLink(link);
    expect(again.status).toBe(403);
    expect(await again.text()).toContain('already used');
  });

  it('serves the bundle compressed, cached for a year under hashed names, with the same headers', async () => {
    const r = await start();
    const client = await signIn(r, 'owner');
    const shell = await (await client.get('/console/')).text();
    const script = /src="(\/console\/assets\/app-\w+\.js)"/.exec(shell)![1]!;
    const asset = await fetch(`${r.base}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-encoding')).toBe('gzip');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await fetch(`${r.base}/console/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${r.base}/console/assets/manifest.json`)).status).toBe(404);
  });

  it('refuses a made-up link with a clear page', async () => {
    const r = await start();
    const response = await useLink(`${r.base}/console/sign-in?t=${'x'.repeat(43)}`);
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).toContain('This sign-in link is not valid');
    expect(text).toContain('send /console to the bot in a direct message');
  });

  it('gives no link in a group, nor to a member', async () => {
    const r = await start();
    const group = testGroup('g1');
    r.platform.channel.userMessage({ chat: group, sender: { id: 'owner', name: 'Owner' }, text: '/console', mentionsBot: true });
    await r.platform.waitFor(() => r.platform.messagesIn(group).at(-1), 5_000);
    expect(r.platform.messagesIn(group).at(-1)!.text).toContain('direct message');
    const dm = testDm('mallory');
    r.platform.channel.userMessage({ chat: dm, sender: { id: 'mallory', name: 'Mallory' }, text: '/console' });
    const reply = await r.platform.waitFor(() => r.platform.lastMessage(dm), 5_000);
    expect(reply.text).toContain('Only an owner or an admin');
    expect(reply.text).not.toContain('/console/sign-in');
  });

  it('gives the owner at the machine a link through the key in the data folder, and nobody without it', async () => {
    const r = await start();
    const key = readFileSync(join(r.dir, 'console-cli.key'), 'utf8').trim();
    const refused = await fetch(`${r.base}/console/cli-link`, { method: 'POST', headers: { authorization: 'Bearer wrong' } });
    expect(refused.status).toBe(403);
    const answered = await fetch(`${r.base}/console/cli-link`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(answered.status).toBe(200);
    const { url } = (await answered.json()) as { url: string };
    expect((await useLink(url)).status).toBe(303);
  });
});

describe('links expire and are used once, in the store', () => {
  it('refuses a link after ten minutes, and a second use of a fresh one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pincer-links-'));
    const store = await Store.open({ dataDir: dir });
    try {
      let now = 1_000_000;
      const links = new SignInLinks(store, () => now);
      const late = await links.issue({ userId: 'test:owner', name: 'Owner' });
      now += LINK_TTL_MS + 1;
      expect(await links.redeem(late)).toEqual({ ok: false, reason: 'expired' });
      const fresh = await links.issue({ userId: 'test:owner', name: 'Owner' });
      const both = await Promise.all([links.redeem(fresh), links.redeem(fresh)]);
      expect(both.filter((result) => result.ok)).toHaveLength(1);
      expect(both.find((result) => !result.ok)).toEqual({ ok: false, reason: 'used' });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sessions and changes', () => {
  it('answers 401 without a session, with a page for people and JSON for the page script', async () => {
    const r = await start();
    const page = await fetch(`${r.base}/console/`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('Not signed in');
    const api = await fetch(`${r.base}/console/api/overview`);
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ error: 'not signed in' });
  });

  it('refuses a change without the CSRF token, with a wrong one, or from another origin (403), and makes it with the token', async () => {
    const r = await start();
    const client = await signIn(r, 'owner');
    const change = { scope: 'global', tool: 'sign_in_site', mode: 'ask' };
    expect((await client.post('/console/api/policy', change, { csrf: null })).status).toBe(403);
    expect((await client.post('/console/api/policy', change, { csrf: 'not-the-token' })).status).toBe(403);
    expect((await client.post('/console/api/policy', change, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await r.app.services.policy.entry('sign_in_site', 'global')).mode).not.toBe('ask');
    const made = await client.post('/console/api/policy', change);
    expect(made.status).toBe(200);
    expect(((await made.json()) as { text: string }).text).toContain('Policy for sign_in_site set to "ask"');
    expect((await r.app.services.policy.entry('sign_in_site', 'global')).mode).toBe('ask');
    // Audited as a change by that person, as /policy in chat records it.
    const audit = await createAuditLog(r.app.store, { log: silentLogger }).recent(10);
    expect(audit).toContainEqual(expect.objectContaining({ kind: 'policy', tool: 'sign_in_site', scope: 'global', mode: 'ask', by: 'test:owner' }));
  });

  it('ends the session of an admin removed from admins since signing in', async () => {
    const r = await start({ admins: ['test:ada'] });
    const ada = await signIn(r, 'ada');
    expect((await ada.get('/console/api/overview')).status).toBe(200);
    r.app.services.config.admins.splice(0);
    expect((await ada.get('/console/api/overview')).status).toBe(401);
  });

  it('ends a session on sign-out', async () => {
    const r = await start();
    const client = await signIn(r, 'owner');
    expect((await client.post('/console/api/sign-out', {})).status).toBe(200);
    expect((await client.get('/console/api/overview')).status).toBe(401);
  });

  it('answers a malformed request with a plain error, never a stack trace', async () => {
    const r = await start();
    const client = await signIn(r, 'owner');
    const response = await client.get('/console/api/conversations/%E0%A4%A');
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).toContain('the console could not answer');
    expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });
});

describe('what each person sees', () => {
  it('shows an admin of one group that group only, and refuses the rest', async () => {
    const r = await start();
    const [ours, theirs] = [testGroup('g1', 'Ours'), testGroup('g2', 'Theirs')];
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    await say(r, ours, 'alice', 'hello ours', true);
    await say(r, theirs, 'bob', 'hello theirs', true);
    await say(r, testDm('carol'), 'carol', 'hello from a DM');
    const alice = await signIn(r, 'alice');
    const listed = (await (await alice.get('/console/api/conversations')).json()) as Array<{ key: string; label: string }>;
    expect(listed.map((c) => c.label)).toEqual(['Ours']);
    expect((await alice.get(`/console/api/conversations/${encodeURIComponent('test:g2')}`)).status).toBe(404);
    expect((await alice.get(`/console/api/conversations/${encodeURIComponent('test:g1')}`)).status).toBe(200);
    const scopes = (await (await alice.get('/console/api/policy')).json()) as Array<{ scope: string }>;
    expect(scopes.map((s) => s.scope)).toEqual(['test:group:g1']);
    expect((await alice.post('/console/api/policy', { scope: 'test:group:g2', tool: 'sign_in_site', mode: 'disable' })).status).toBe(403);
    expect((await alice.post('/console/api/policy', { scope: 'global', tool: 'sign_in_site', mode: 'disable' })).status).toBe(200);
    // The global policy is refused by the command itself, as /policy in a DM refuses it.
    expect((await r.app.services.policy.entry('sign_in_site', 'global')).mode).not.toBe('disable');
    const owner = await signIn(r, 'owner');
    const all = (await (await owner.get('/console/api/conversations')).json()) as Array<{ label: string }>;
    // Every conversation that had a turn (the owner's DM had commands only).
    expect(all.map((c) => c.label).sort()).toEqual(['DM dm-carol', 'Ours', 'Theirs']);
  });

  it('shows tool calls with their sensitive arguments and the configured key redacted', async () => {
    const r = await start();
    await say(r, testDm('owner'), 'owner', 'login example.org');
    const client = await signIn(r, 'owner');
    const body = await (await client.get(`/console/api/conversations/${encodeURIComponent('test:dm-owner')}`)).text();
    expect(body).toContain('sign_in_site');
    expect(body).toContain('[redacted]');
    expect(body).toContain('signed in to example.org');
    expect(body).not.toContain(PASSWORD);
    for (const path of ['overview', 'conversations', 'work', 'policy', 'session']) {
      expect(await (await client.get(`/console/api/${path}`)).text()).not.toContain(API_KEY);
    }
  });
});

describe('approvals', () => {
  it('shows the approval a conversation waits for, redacted, without a way to answer it', async () => {
    const r = await start();
    await r.app.services.policy.set('sign_in_site', 'global', 'ask', 'test:owner');
    const chat = testDm('owner');
    r.platform.channel.userMessage({ chat, sender: { id: 'owner', name: 'owner' }, text: 'login example.org' });
    await r.platform.waitFor(() => r.platform.approvalsIn(chat).length > 0, 5_000, 'the approval prompt');
    await r.app.runtime.idle();
    const client = await signIn(r, 'owner');
    const view = (await (await client.get(`/console/api/conversations/${encodeURIComponent('test:dm-owner')}`)).json()) as { pendingApproval?: { tool: string; summary: string } };
    expect(view.pendingApproval?.tool).toBe('sign_in_site');
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
    expect((await client.post('/console/api/approvals/x/approve', {})).status).toBe(404);
  });
});

describe('jobs and routines', () => {
  it('pauses and resumes a routine through /routines, and refuses one the person may not see', async () => {
    const r = await start();
    const tomorrow = Date.now() + 86_400_000;
    await r.app.routines.store.create(reminderRecord('r1', 'water the plants', tomorrow));
    await r.app.routines.store.create(reminderRecord('r2', 'call mum', tomorrow, 'test:bob', 'Bob'));
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    await say(r, testGroup('g1'), 'alice', 'hello', true);
    const owner = await signIn(r, 'owner');
    const listed = (await (await owner.get('/console/api/work')).json()) as { routines: Array<{ id: string; nextAt?: number }> };
    expect(listed.routines.map((routine) => routine.id).sort()).toEqual(['r1', 'r2']);
    const paused = await owner.post('/console/api/routines/r1/pause', {});
    expect(((await paused.json()) as { text: string }).text).toBe('Routine r1 is paused.');
    expect((await r.app.routines.store.get('r1'))?.enabled).toBe(false);
    const resumed = await owner.post('/console/api/routines/r1/resume', {});
    expect(((await resumed.json()) as { text: string }).text).toContain('Routine r1 is on again');
    expect((await r.app.routines.store.get('r1'))?.enabled).toBe(true);
    const alice = await signIn(r, 'alice');
    expect(((await (await alice.get('/console/api/work')).json()) as { routines: unknown[] }).routines).toEqual([]);
    expect((await alice.post('/console/api/routines/r2/pause', {})).status).toBe(404);
    expect((await r.app.routines.store.get('r2'))?.enabled).toBe(true);
  });
});

describe('traces', () => {
  it('shows the trace the app recorded of a turn, with its model and tool spans, to those who see the conversation', async () => {
    const r = await startConsoleRig({ tools: [signInTool()], responder: loginModel, recordedTraces: true });
    rig = r;
    await say(r, testDm('owner'), 'owner', 'login example.org');
    const client = await signIn(r, 'owner');
    const thread = encodeURIComponent('test:dm-owner');
    const view = await expectEventually(async () => {
      const seen = (await (await client.get(`/console/api/conversations/${thread}`)).json()) as { traces: Array<{ id: string }> };
      return seen.traces.length ? seen : undefined;
    });
    const trace = (await (await client.get(`/console/api/traces/${encodeURIComponent(view.traces[0]!.id)}`)).json()) as { spans: Array<{ kind: string; name: string }> };
    expect(trace.spans.map((span) => span.kind)).toContain('model');
    expect(trace.spans.filter((span) => span.kind === 'tool').map((span) => span.name)).toEqual(['sign_in_site']);
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    await say(r, testGroup('g1'), 'alice', 'hello', true);
    const alice = await signIn(r, 'alice');
    expect((await alice.get(`/console/api/traces/${encodeURIComponent(view.traces[0]!.id)}`)).status).toBe(404);
  });
});

/** Polls `read` until it gives a value (2 s at most). */
async function expectEventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 0; tries < 40; tries++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('never came');
}

