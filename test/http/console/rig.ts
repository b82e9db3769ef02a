/**
 * The real app with the console on, over the in-memory test platform and the
 * fake model, on a free local port; with helpers to get a sign-in link the
 * way a person does (`/console` in a DM) and to sign in over HTTP.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConsole } from '../../../scripts/console-build.mjs';
import type { ConfigInput } from '../../../src/config/schema.js';
import { startAppRig, type AppRig, type AppRigOptions } from '../../support/app-rig.js';
import { freePort } from '../../support/ports.js';
import { testDm } from '../../support/test-channel.js';
import { FixtureTraces } from './fixture-traces.js';

let bundle: Promise<string> | undefined;

/** The console's bundle, built once per test file into a temporary folder. */
export function consoleBundle(): Promise<string> {
  bundle ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pincer-console-bundle-'));
    await buildConsole(dir);
    return dir;
  })();
  return bundle;
}

/** A running app with its console. */
export interface ConsoleRig extends AppRig {
  base: string;
  traces: FixtureTraces;
}

/**
 * Starts the app with `console.enabled` and an HTTP port. The console reads
 * the fixture's made-up traces, or with `recordedTraces` the app's own
 * recorder.
 */
export async function startConsoleRig(options: AppRigOptions & { config?: ConfigInput; recordedTraces?: boolean } = {}): Promise<ConsoleRig> {
  const port = await freePort();
  const traces = new FixtureTraces();
  const rig = await startAppRig({
    ...options,
    config: { ...options.config, console: { enabled: true }, http: { port, host: '127.0.0.1' } },
    app: { ...(options.recordedTraces ? {} : { consoleTraces: traces }), consoleAssetsDir: await consoleBundle() },
  });
  return Object.assign(rig, { base: `http://127.0.0.1:${port}`, traces });
}

/** Sends `/console` in `userId`'s DM and returns the link the bot answered with. */
export async function linkFor(rig: AppRig, userId: string): Promise<string> {
  const chat = testDm(userId);
  const before = rig.platform.messagesIn(chat).length;
  rig.platform.channel.userMessage({ chat, sender: { id: userId, name: userId }, text: '/console' });
  const reply = await rig.platform.waitFor(() => rig.platform.messagesIn(chat).slice(before).at(-1), 5_000, 'the /console answer');
  const link = /https?:\/\/\S+\/console\/sign-in\?t=[\w-]+/.exec(reply.text)?.[0];
  if (!link) throw new Error(`no link in: ${reply.text}`);
  return link;
}

/** Uses a link as the sign-in page's button does; the response (303 and a cookie when it worked). */
export async function useLink(link: string): Promise<Response> {
  const url = new URL(link);
  return fetch(new URL('/console/sign-in', url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ t: url.searchParams.get('t') ?? '' }),
    redirect: 'manual',
  });
}

/** A signed-in HTTP client: its cookie and CSRF token, and GET and POST helpers. */
export interface ConsoleClient {
  cookie: string;
  csrf: string;
  get(path: string): Promise<Response>;
  post(path: string, body: unknown, options?: { csrf?: string | null; origin?: string }): Promise<Response>;
}

/** Signs `userId` in with a link from their DM. */
export async function signIn(rig: ConsoleRig, userId: string): Promise<ConsoleClient> {
  const response = await useLink(await linkFor(rig, userId));
  if (response.status !== 303) throw new Error(`sign-in refused: ${response.status} ${await response.text()}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  const get = (path: string) => fetch(`${rig.base}${path}`, { headers: { cookie } });
  const session = (await (await get('/console/api/session')).json()) as { csrf: string };
  return {
    cookie,
    csrf: session.csrf,
    get,
    post: (path, body, options = {}) => {
      const csrf = options.csrf === undefined ? session.csrf : options.csrf;
      return fetch(`${rig.base}${path}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...(csrf === null ? {} : { 'x-csrf-token': csrf }), ...(options.origin ? { origin: options.origin } : {}) },
        body: JSON.stringify(body),
      });
    },
  };
}
