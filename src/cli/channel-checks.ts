/**
 * The channel checks of `pincer doctor` and `pincer init`: each configured
 * platform's token, asked the platform's own way (Telegram `getMe`, Discord
 * `GET /users/@me` and the Message Content intent, Slack `auth.test` and its
 * scopes, and in Socket Mode the app token with `apps.connections.open`). Each resolves to a list: the token's result first, then what
 * depends on it. None throws.
 */
import type { Config } from '../config/schema.js';
import { DEFAULT_CHECK_OPTIONS, fail, networkReason, pass, skip, type CheckResult } from './check-result.js';

/** The scopes the Slack app manifest (`config/slack-app-manifest.yaml`) gives the bot. */
export const SLACK_BOT_SCOPES = [
  'app_mentions:read',
  'chat:write',
  'im:history',
  'im:read',
  'im:write',
  'channels:history',
  'groups:history',
  'mpim:history',
  'channels:read',
  'groups:read',
  'mpim:read',
  'users:read',
  'commands',
] as const;

/** The scopes of the file features, and what their absence turns off (a warning: the bot runs without them). */
export const SLACK_FILE_SCOPES = {
  'files:read': 'files people attach cannot be downloaded',
  'files:write': 'files_send cannot share files',
} as const;

/** Application flags saying the Message Content intent is on (verified bots, and bots in under 100 servers). */
const DISCORD_MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);

/** An HTTP answer: the status, the headers and the JSON body (undefined when not JSON). */
interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

/** One request with the check timeout; throws only for a network failure or no answer in time. */
async function request(url: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(DEFAULT_CHECK_OPTIONS.requestTimeoutMs) });
  const text = await response.text();
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body };
}

/** The failure line for a platform that could not be reached. */
function unreachable(name: string, base: string, error: unknown, envName: string): CheckResult {
  return fail(name, `cannot reach ${base} (${networkReason(error)})`, `check the network, or ${envName} if you point it elsewhere`);
}

/** The Telegram bot token, with `getMe`. */
export async function checkTelegram(telegram: Config['telegram']): Promise<CheckResult[]> {
  const name = 'telegram token';
  if (!telegram.token) return [skip(name, 'telegram is not configured')];
  const base = telegram.apiRoot ?? 'https://api.telegram.org';
  let answer: HttpAnswer;
  try {
    answer = await request(`${base}/bot${telegram.token}/getMe`);
  } catch (error) {
    return [unreachable(name, base, error, 'TELEGRAM_API_ROOT')];
  }
  const bot = answer.body?.result as { username?: string } | undefined;
  if (answer.body?.ok === true && bot) return [pass(name, `the bot is @${bot.username ?? '?'}`)];
  if (answer.status === 401 || answer.status === 404) {
    return [fail(name, `Telegram refused the token (${answer.status})`, 'set TELEGRAM_BOT_TOKEN to the token @BotFather gave (send /token to @BotFather to see it again)')];
  }
  return [fail(name, `getMe failed (${answer.status}: ${String(answer.body?.description ?? 'no description')})`, 'try again later, or check TELEGRAM_API_ROOT')];
}

/** The Discord bot token, with `GET /users/@me`, then the application's Message Content intent. */
export async function checkDiscord(discord: Config['discord']): Promise<CheckResult[]> {
  const name = 'discord token';
  if (!discord.token) return [skip(name, 'discord is not configured')];
  // discord.js adds the API version to the configured base, so the checks do too.
  const base = `${(discord.apiUrl ?? 'https://discord.com/api').replace(/\/+$/, '')}/v10`;
  const init = { headers: { Authorization: `Bot ${discord.token}` } };
  let me: HttpAnswer;
  let app: HttpAnswer;
  try {
    me = await request(`${base}/users/@me`, init);
    if (me.status !== 200) return [discordFailure(name, me)];
    app = await request(`${base}/applications/@me`, init);
  } catch (error) {
    return [unreachable(name, base, error, 'DISCORD_API_URL')];
  }
  const token = pass(name, `the bot is ${String(me.body?.username ?? '?')}`);
  return [token, messageContentIntent(app)];
}

function discordFailure(name: string, answer: HttpAnswer): CheckResult {
  if (answer.status === 401) {
    return fail(name, 'Discord refused the token (401)', 'in the Developer Portal open your application, Bot, Reset Token, and set DISCORD_BOT_TOKEN to the new token');
  }
  return fail(name, `GET /users/@me failed (${answer.status}: ${String(answer.body?.message ?? 'no message')})`, 'try again later, or check DISCORD_API_URL');
}

/** The bot asks for message text; without the intent Discord refuses its connection. */
function messageContentIntent(app: HttpAnswer): CheckResult {
  const name = 'discord message content intent';
  const fix = 'in the Developer Portal open your application, Bot, and switch on MESSAGE CONTENT INTENT';
  if (app.status !== 200 || typeof app.body?.flags !== 'number') {
    return { name, status: 'warn', detail: `could not read the application's flags (${app.status})`, fix: `if it is off: ${fix}` };
  }
  if ((app.body.flags & DISCORD_MESSAGE_CONTENT_FLAGS) === 0) return fail(name, 'not enabled: the bot cannot connect without it', fix);
  return pass(name, 'enabled');
}

/** The Slack bot token, with `auth.test`, then its scopes against the manifest's. */
export async function checkSlack(slack: Config['slack']): Promise<CheckResult[]> {
  const name = 'slack token';
  if (!slack.botToken) return [skip(name, 'slack is not configured')];
  const base = `${(slack.apiUrl ?? 'https://slack.com/api').replace(/\/+$/, '').replace(/\/api$/, '')}/api`;
  let answer: HttpAnswer;
  try {
    answer = await request(`${base}/auth.test`, { method: 'POST', headers: { Authorization: `Bearer ${slack.botToken}` } });
  } catch (error) {
    return [unreachable(name, base, error, 'SLACK_API_URL')];
  }
  if (answer.body?.ok !== true) {
    const code = String(answer.body?.error ?? answer.status);
    const refused = ['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired'].includes(code);
    const fix = refused ? 'set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-) under OAuth & Permissions' : 'try again later, or check SLACK_API_URL';
    return [fail(name, refused ? `Slack refused the token (${code})` : `auth.test failed (${code})`, fix)];
  }
  const token = pass(name, `the bot is ${String(answer.body.user ?? '?')} in ${String(answer.body.team ?? '?')}`);
  const results = [token, slackScopes(answer.headers.get('x-oauth-scopes'))];
  if (slack.mode === 'socket') results.push(await slackAppToken(base, slack.appToken));
  return results;
}

/**
 * The app-level token of Socket Mode, with `apps.connections.open`: the call
 * the bot makes to connect (it hands out a socket URL, which is not opened).
 */
async function slackAppToken(base: string, appToken: string | undefined): Promise<CheckResult> {
  const name = 'slack app token';
  const create = 'create one under Basic Information, App-Level Tokens, with the connections:write scope, and set SLACK_APP_TOKEN to it (xapp-)';
  if (!appToken) return fail(name, 'Socket Mode needs an app-level token and none is set', create);
  let answer: HttpAnswer;
  try {
    answer = await request(`${base}/apps.connections.open`, { method: 'POST', headers: { Authorization: `Bearer ${appToken}` } });
  } catch (error) {
    return unreachable(name, base, error, 'SLACK_API_URL');
  }
  if (answer.body?.ok === true) return pass(name, 'Socket Mode can connect');
  const code = String(answer.body?.error ?? answer.status);
  if (code === 'not_allowed_token_type') return fail(name, 'SLACK_APP_TOKEN is not an app-level token (not_allowed_token_type)', create);
  if (['invalid_auth', 'not_authed', 'token_revoked', 'token_expired', 'account_inactive'].includes(code)) return fail(name, `Slack refused the app token (${code})`, create);
  if (code === 'missing_scope') return fail(name, 'the app token lacks the connections:write scope', create);
  return fail(name, `apps.connections.open failed (${code})`, 'check that Socket Mode is on under Settings, Socket Mode, or try again later');
}

function slackScopes(header: string | null): CheckResult {
  const name = 'slack scopes';
  if (header === null) return { name, status: 'warn', detail: 'Slack did not say which scopes the token has', fix: `make sure the app has ${[...SLACK_BOT_SCOPES, ...Object.keys(SLACK_FILE_SCOPES)].join(', ')}` };
  const granted = new Set(header.split(',').map((scope) => scope.trim()));
  const missing = SLACK_BOT_SCOPES.filter((scope) => !granted.has(scope));
  const fix = 'add them under OAuth & Permissions, Bot Token Scopes (or paste config/slack-app-manifest.yaml), then reinstall the app to the workspace';
  if (missing.length) return fail(name, `missing ${missing.join(', ')}`, fix);
  const files = Object.entries(SLACK_FILE_SCOPES).filter(([scope]) => !granted.has(scope));
  if (files.length) return { name, status: 'warn', detail: `missing ${files.map(([scope, without]) => `${scope} (${without})`).join(', ')}`, fix };
  return pass(name, 'every scope pincer needs');
}

// ---------------------------------------------------------------------------
// The store and the data folder
