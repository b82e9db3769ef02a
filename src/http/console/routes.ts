/**
 * The console's HTTP routes, under `/console` on the operations endpoint:
 *
 * - `GET /console/sign-in?t=TOKEN`: a page with one button; `POST
 *   /console/sign-in` uses the link and sets the session cookie.
 * - `GET /console/`: the application's shell (signed in), `/console/assets/*`
 *   its bundled files.
 * - `/console/api/*`: JSON for the pages (signed in); every POST carries the
 *   session's CSRF token in `x-csrf-token`; `GET /console/api/events` is the
 *   live stream.
 * - `POST /console/cli-link`: a link for the owner, for `pincer console-link`
 *   on the machine (loopback only, with the key in the data folder).
 *
 * Every response carries the security headers of pages.ts; an error answers
 * with a plain page or `{error}` and goes to the log, never to the browser.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ConsoleAccess } from './access.js';
import { dmOf, runAs } from './as-command.js';
import type { ConsoleAssets } from './assets.js';
import type { ConsoleDeps } from './deps.js';
import type { ErrorCounter } from './errors-window.js';
import { signInPath } from './feature.js';
import type { LiveFeed } from './live.js';
import { errorPage, refusedLinkPage, SECURITY_HEADERS, shellPage, signedOutPage, signInPage } from './pages.js';
import { cookieOf, csrfMatches, SESSION_COOKIE, SESSION_TTL_MS, sessionCookie, type Session, type Sessions } from './sessions.js';
import type { SignInLinks } from './sign-in-links.js';
import * as views from './views.js';
import { mcpServers, toolChoices, usageByPerson } from './operations.js';
import { administers, restartsMcp, seesEveryone, seesWork, type Viewer } from './viewer.js';

/** The largest request body the console reads. */
const MAX_BODY_BYTES = 8_192;

/** What the routes work with. */
export interface RouteParts {
  deps: ConsoleDeps;
  links: SignInLinks;
  sessions: Sessions;
  access: ConsoleAccess;
  assets: ConsoleAssets;
  live: LiveFeed;
  errors: ErrorCounter;
  /** The key `pincer console-link` sends (read from the data folder). */
  cliKey: string;
  /** Who `pincer console-link` signs in: the first configured owner. */
  cliOwner?: string;
  /** The endpoint's base URL, for the links it makes. */
  baseUrl(): string;
}

/** A request the route refuses with a status and a message for the person. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const PolicyChangeSchema = z.object({ tool: z.string().min(1).max(100), scope: z.string().min(1).max(200), mode: z.enum(['allow', 'ask', 'disable', 'reset']) });

/** Handles one request under `/console`; false when the path is not the console's. */
export async function handleConsole(parts: RouteParts, request: IncomingMessage, response: ServerResponse): Promise<boolean> {
  const url = new URL(request.url ?? '/', 'http://console.invalid');
  if (url.pathname !== '/console' && !url.pathname.startsWith('/console/')) return false;
  const css = parts.assets.manifest.css;
  try {
    await route(parts, url, request, response);
  } catch (error) {
    const status = error instanceof Refusal ? error.status : 500;
    if (status === 500) parts.deps.log.error({ err: error, path: url.pathname }, 'console request failed');
    if (response.headersSent) {
      response.end();
    } else if (url.pathname.startsWith('/console/api/')) {
      sendJson(response, status, { error: error instanceof Refusal ? error.message : 'the console could not answer; see the log' });
    } else {
      sendHtml(response, status, errorPage(status, css));
    }
  }
  return true;
}

async function route(parts: RouteParts, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { pathname } = url;
  const method = request.method ?? 'GET';
  const css = parts.assets.manifest.css;
  if (method === 'POST' && !sameOrigin(request)) throw new Refusal(403, 'cross-origin request refused');
  if (pathname.startsWith('/console/assets/') && (method === 'GET' || method === 'HEAD')) {
    if (!parts.assets.serve(pathname.slice('/console/assets/'.length), request, response)) sendHtml(response, 404, errorPage(404, css));
    return;
  }
  if (pathname === '/console/sign-in') return signIn(parts, url, request, response);
  if (pathname === '/console/cli-link' && method === 'POST') return cliLink(parts, request, response);
  const sessionId = cookieOf(request.headers.cookie, SESSION_COOKIE);
  let session = await parts.sessions.find(sessionId);
  if (session && !parts.access.stillHolds(session.viewer)) {
    // Removed from owners or admins since signing in: the session ends here.
    await parts.sessions.end(sessionId);
    session = undefined;
  }
  if (!pathname.startsWith('/console/api/')) {
    if (method !== 'GET') throw new Refusal(405, 'only GET');
    if (!session) return sendHtml(response, 401, signedOutPage(css));
    if (pathname !== '/console' && pathname !== '/console/') return sendHtml(response, 404, errorPage(404, css));
    return sendHtml(response, 200, shellPage(parts.assets.manifest.script, css));
  }
  if (!session) throw new Refusal(401, 'not signed in');
  if (method === 'POST' && !csrfMatches(session, header(request, 'x-csrf-token'))) throw new Refusal(403, 'missing or wrong CSRF token');
  const api = pathname.slice('/console/api/'.length);
  if (method === 'GET') return getApi(parts, session.viewer, session, api, request, response);
  if (method === 'POST') return postApi(parts, session.viewer, api, request, response, sessionId);
  throw new Refusal(405, 'only GET and POST');
}

async function getApi(parts: RouteParts, viewer: Viewer, session: Session, api: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { deps } = parts;
  if (api === 'session') return sendJson(response, 200, { name: viewer.name, userId: viewer.userId, role: viewer.role, seesEveryone: seesEveryone(viewer), csrf: session.csrf, expiresAt: session.expiresAt });
  if (api === 'overview') return sendJson(response, 200, await views.overview(deps, parts.errors));
  if (api === 'conversations') return sendJson(response, 200, await views.conversations(deps, viewer));
  if (api.startsWith('conversations/')) {
    const entry = await views.visibleConversation(deps, viewer, decodeURIComponent(api.slice('conversations/'.length)));
    if (!entry) throw new Refusal(404, 'no such conversation');
    return sendJson(response, 200, await views.conversation(deps, entry));
  }
  if (api === 'work') return sendJson(response, 200, await views.work(deps, viewer));
  if (api === 'policy') return sendJson(response, 200, await views.policy(deps, viewer));
  if (api === 'mcp') return sendJson(response, 200, mcpServers(deps, viewer));
  if (api === 'usage') return sendJson(response, 200, await usageByPerson(deps, viewer));
  if (api === 'permissions') {
    const choices = await toolChoices(deps, viewer);
    if (!choices) throw new Refusal(403, 'only owners and configured admins see everyone\'s tool choices');
    return sendJson(response, 200, choices);
  }
  if (api.startsWith('traces/')) {
    const trace = await views.trace(deps, viewer, decodeURIComponent(api.slice('traces/'.length)));
    if (!trace) throw new Refusal(404, 'no such trace');
    return sendJson(response, 200, trace);
  }
  if (api === 'events') {
    return parts.live.serve(request, response, SECURITY_HEADERS, async (thread) => {
      if (viewer.role === 'owner') return true;
      return Boolean(await views.visibleConversation(deps, viewer, thread));
    });
  }
  throw new Refusal(404, 'no such API');
}

async function postApi(parts: RouteParts, viewer: Viewer, api: string, request: IncomingMessage, response: ServerResponse, sessionId: string | undefined): Promise<void> {
  const { deps } = parts;
  const run = (event: Parameters<ConsoleDeps['runtime']['runCommand']>[0]) => deps.runtime.runCommand(event);
  if (api === 'sign-out') {
    await parts.sessions.end(sessionId);
    response.setHeader('set-cookie', sessionCookie('', 0, isHttps(request)));
    return sendJson(response, 200, { ok: true });
  }
  const work = /^(jobs|routines)\/([\w-]{1,64})\/(cancel|pause|resume)$/.exec(api);
  if (work) {
    const [, kind, id, action] = work as unknown as [string, 'jobs' | 'routines', string, string];
    if ((kind === 'jobs') !== (action === 'cancel')) throw new Refusal(404, 'no such action');
    const record = kind === 'jobs' ? await deps.services.jobs.get(id) : await deps.services.routines.get(id);
    if (!record || !seesWork(viewer, record)) throw new Refusal(404, `no ${kind === 'jobs' ? 'job' : 'routine'} ${id} you can see`);
    // From the conversation it was made in when the viewer administers it there, else from their DM: the command decides as in chat.
    const chat = record.origin.kind === 'group' && administers(viewer, record.origin.scope) ? record.origin : dmOf(viewer);
    return sendJson(response, 200, await runAs(run, viewer, chat, kind, `${action} ${id}`));
  }
  const restart = /^mcp\/([\w.-]{1,64})\/restart$/.exec(api);
  if (restart) {
    if (!restartsMcp(viewer)) throw new Refusal(403, 'only an owner can restart an MCP server');
    return sendJson(response, 200, await runAs(run, viewer, dmOf(viewer), 'mcp', `restart ${restart[1]!}`));
  }
  if (api === 'policy') {
    const change = PolicyChangeSchema.safeParse(await readJson(request));
    if (!change.success) throw new Refusal(400, 'expected {tool, scope, mode}');
    const { tool, scope, mode } = change.data;
    let chat;
    if (scope === 'global') chat = dmOf(viewer);
    else {
      if (!administers(viewer, scope)) throw new Refusal(403, 'you do not administer that scope');
      chat = (await deps.directory.entries()).find((entry) => entry.chat.kind === 'group' && entry.chat.scope === scope)?.chat;
      if (!chat) throw new Refusal(404, 'no conversation of that scope is known');
    }
    const args = `${mode} ${tool} ${scope === 'global' ? 'global' : 'here'}`;
    return sendJson(response, 200, await runAs(run, viewer, chat, 'policy', args));
  }
  throw new Refusal(404, 'no such API');
}

/** The sign-in page (GET), and using the link (POST). */
async function signIn(parts: RouteParts, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const css = parts.assets.manifest.css;
  if (request.method === 'GET') {
    const token = url.searchParams.get('t') ?? '';
    return sendHtml(response, /^[\w-]{20,100}$/.test(token) ? 200 : 400, /^[\w-]{20,100}$/.test(token) ? signInPage(token, css) : refusedLinkPage('unknown', css));
  }
  if (request.method !== 'POST') throw new Refusal(405, 'only GET and POST');
  const token = new URLSearchParams(await readBody(request)).get('t') ?? '';
  const redeemed = await parts.links.redeem(token);
  if (!redeemed.ok) return sendHtml(response, 403, refusedLinkPage(redeemed.reason, css));
  const viewer = await parts.access.viewerFor(redeemed.holder);
  if (!viewer) return sendHtml(response, 403, refusedLinkPage('not-allowed', css));
  const { id } = await parts.sessions.create(viewer);
  parts.deps.log.info({ user: viewer.userId, role: viewer.role }, 'console: signed in');
  response.writeHead(303, { ...SECURITY_HEADERS, location: '/console/', 'set-cookie': sessionCookie(id, SESSION_TTL_MS, isHttps(request)), 'cache-control': 'no-store' });
  response.end();
}

/** A link for the owner, asked for by `pincer console-link` on this machine. */
async function cliLink(parts: RouteParts, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const address = request.socket.remoteAddress ?? '';
  const loopback = address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
  const sent = Buffer.from((header(request, 'authorization') ?? '').replace(/^Bearer /, ''));
  const key = Buffer.from(parts.cliKey);
  if (!loopback || sent.length !== key.length || !timingSafeEqual(sent, key)) throw new Refusal(403, 'refused');
  if (!parts.cliOwner) throw new Refusal(409, 'no owner is configured (owners in the config)');
  const token = await parts.links.issue({ userId: parts.cliOwner, name: 'owner at the machine' });
  sendJson(response, 200, { url: `${parts.baseUrl()}${signInPath(token)}` });
}

/** Whether a POST comes from the console's own pages: no Origin (not a browser's cross-site form), or the same host. */
function sameOrigin(request: IncomingMessage): boolean {
  const origin = header(request, 'origin');
  if (!origin) return true;
  if (origin === 'null') return false;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

function isHttps(request: IncomingMessage): boolean {
  return header(request, 'x-forwarded-proto') === 'https';
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, 'request too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) throw new Refusal(415, 'expected JSON');
  try {
    return JSON.parse(await readBody(request)) as unknown;
  } catch (error) {
    if (error instanceof Refusal) throw error;
    throw new Refusal(400, 'invalid JSON');
  }
}

function sendHtml(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(html);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}
