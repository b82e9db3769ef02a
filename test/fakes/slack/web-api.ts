/**
 * The Web API methods the bot calls, over the fake workspace. Each returns
 * the JSON Slack would (`ok: true` with the result, or `ok: false` with an
 * error code); the server always answers HTTP 200 except for injected failures.
 */
import type { ConversationType, FakeMessage, FakeWorkspace } from './workspace.js';

/** Parameters of a call, decoded from the form or JSON body. */
export type Params = Record<string, unknown>;

/** What a method handler may do besides answering. */
export interface MethodHooks {
  /** The WebSocket URL apps.connections.open hands out. */
  socketUrl(): string;
  /** Called when the bot posts a message (the fake echoes it as an event, as Slack does). */
  onBotMessage(message: FakeMessage): void;
}

type Handler = (workspace: FakeWorkspace, params: Params, hooks: MethodHooks) => Params;

const HANDLERS: Record<string, Handler> = {
  'auth.test': (workspace) => ({
    url: 'https://fake.slack.test/',
    team: 'Fake Team',
    user: workspace.bot.name,
    team_id: workspace.teamId,
    user_id: workspace.bot.userId,
    bot_id: workspace.bot.botId,
    is_enterprise_install: false,
  }),
  'apps.connections.open': (_workspace, _params, hooks) => ({ url: hooks.socketUrl() }),
  'chat.postMessage': postMessage,
  'chat.update': updateMessage,
  'chat.postEphemeral': postEphemeral,
  'users.info': usersInfo,
  'conversations.info': conversationsInfo,
  'conversations.history': conversationsHistory,
  'conversations.replies': conversationsReplies,
};

/** The methods that take the app-level token rather than the bot token. */
export const APP_TOKEN_METHODS = new Set(['apps.connections.open']);

/** An `ok: false` answer when `token` is wrong for `method`, else undefined; a token of the other kind is told apart, as Slack does. */
export function tokenRefusal(method: string, token: string, tokens: { bot: string; app: string }): Params | undefined {
  if (!token) return { ok: false, error: 'not_authed' };
  const [expected, otherKind] = APP_TOKEN_METHODS.has(method) ? [tokens.app, tokens.bot] : [tokens.bot, tokens.app];
  if (token === expected) return undefined;
  return { ok: false, error: token === otherKind ? 'not_allowed_token_type' : 'invalid_auth' };
}

/** Runs one method; unknown methods answer `unknown_method`. */
export function callMethod(method: string, workspace: FakeWorkspace, params: Params, hooks: MethodHooks): Params {
  const handler = HANDLERS[method];
  if (!handler) return { ok: false, error: 'unknown_method' };
  try {
    return { ok: true, ...handler(workspace, params, hooks) };
  } catch (error) {
    if (error instanceof SlackApiFailure) return { ok: false, error: error.code };
    throw error;
  }
}

/** A Slack error code answered with `ok: false`. */
class SlackApiFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

function requireString(params: Params, key: string): string {
  const value = params[key];
  if (typeof value !== 'string' || !value) throw new SlackApiFailure(key === 'channel' ? 'channel_not_found' : `invalid_arguments`);
  return value;
}

function requireConversation(workspace: FakeWorkspace, params: Params): string {
  const channel = requireString(params, 'channel');
  if (!workspace.conversations.has(channel)) throw new SlackApiFailure('channel_not_found');
  return channel;
}

function textOf(params: Params): string {
  const text = typeof params.text === 'string' ? params.text : '';
  const blocks = blocksOf(params);
  if (!text && !blocks?.length) throw new SlackApiFailure('no_text');
  for (const block of blocks ?? []) {
    const section = block as { type?: string; text?: { text?: string } };
    if (section.type === 'section' && (section.text?.text?.length ?? 0) > 3000) throw new SlackApiFailure('invalid_blocks');
  }
  if (text.length > 40_000) throw new SlackApiFailure('msg_too_long');
  return text;
}

function blocksOf(params: Params): unknown[] | undefined {
  return Array.isArray(params.blocks) ? params.blocks : undefined;
}

function postMessage(workspace: FakeWorkspace, params: Params, hooks: MethodHooks): Params {
  const channel = requireConversation(workspace, params);
  const text = textOf(params);
  const threadTs = typeof params.thread_ts === 'string' && params.thread_ts ? params.thread_ts : undefined;
  const message = workspace.addMessage({
    channel,
    text,
    blocks: blocksOf(params),
    user: workspace.bot.userId,
    bot_id: workspace.bot.botId,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    ...(params.metadata && typeof params.metadata === 'object' ? { metadata: params.metadata } : {}),
  });
  hooks.onBotMessage(message);
  return { channel, ts: message.ts, message: { type: 'message', text, user: message.user, bot_id: message.bot_id, ts: message.ts } };
}

function updateMessage(workspace: FakeWorkspace, params: Params): Params {
  const channel = requireConversation(workspace, params);
  const message = workspace.message(channel, requireString(params, 'ts'));
  if (!message) throw new SlackApiFailure('message_not_found');
  if (message.user !== workspace.bot.userId) throw new SlackApiFailure('cant_update_message');
  const text = textOf(params);
  workspace.updateMessage(message, text, blocksOf(params));
  return { channel, ts: message.ts, text };
}

function postEphemeral(workspace: FakeWorkspace, params: Params): Params {
  const channel = requireConversation(workspace, params);
  const user = requireString(params, 'user');
  if (!workspace.users.has(user)) throw new SlackApiFailure('user_not_found');
  const text = textOf(params);
  const threadTs = typeof params.thread_ts === 'string' ? params.thread_ts : undefined;
  workspace.addNotice({ user, channel, text, kind: 'ephemeral', ...(threadTs ? { thread_ts: threadTs } : {}) });
  return { message_ts: workspace.nextTs() };
}

function usersInfo(workspace: FakeWorkspace, params: Params): Params {
  const user = workspace.users.get(requireString(params, 'user'));
  if (!user) throw new SlackApiFailure('user_not_found');
  return {
    user: {
      id: user.id,
      team_id: workspace.teamId,
      name: user.name.toLowerCase().replace(/\s+/g, '.'),
      real_name: user.name,
      is_admin: Boolean(user.isAdmin),
      is_owner: Boolean(user.isOwner),
      is_bot: Boolean(user.isBot),
      profile: { display_name: user.name, real_name: user.name },
    },
  };
}

function conversationsInfo(workspace: FakeWorkspace, params: Params): Params {
  const conversation = workspace.conversations.get(requireString(params, 'channel'));
  if (!conversation) throw new SlackApiFailure('channel_not_found');
  const is = (type: ConversationType) => conversation.type === type;
  return {
    channel: {
      id: conversation.id,
      ...(conversation.name ? { name: conversation.name } : {}),
      is_channel: is('channel'),
      is_group: is('group'),
      is_im: is('im'),
      is_mpim: is('mpim'),
      is_private: is('group') || is('mpim') || is('im'),
      ...(conversation.user ? { user: conversation.user } : {}),
    },
  };
}

/** A message as the history methods return it; metadata only when asked for. */
function historyJson(message: FakeMessage, params: Params): Params {
  const withMetadata = params.include_all_metadata === true || params.include_all_metadata === 'true';
  return {
    type: 'message',
    ts: message.ts,
    text: message.text,
    ...(message.user ? { user: message.user } : {}),
    ...(message.bot_id ? { bot_id: message.bot_id } : {}),
    ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
    ...(withMetadata && message.metadata ? { metadata: message.metadata } : {}),
  };
}

/** A page of `list`: `limit` entries from the cursor (an offset, as the fake keeps it). */
function page(list: FakeMessage[], params: Params): { items: FakeMessage[]; next?: string } {
  const limit = Math.max(1, Math.min(999, Number(params.limit ?? 100) || 100));
  const from = Number(params.cursor ?? 0) || 0;
  const items = list.slice(from, from + limit);
  return from + limit < list.length ? { items, next: String(from + limit) } : { items };
}

/** The conversation's top-level messages, newest first. */
function conversationsHistory(workspace: FakeWorkspace, params: Params): Params {
  const channel = requireConversation(workspace, params);
  const top = workspace.messages(channel).filter((message) => !message.thread_ts || message.thread_ts === message.ts).reverse();
  const { items, next } = page(top, params);
  return { messages: items.map((message) => historyJson(message, params)), has_more: next !== undefined, response_metadata: { next_cursor: next ?? '' } };
}

/** A thread: its parent, then its replies, oldest first. */
function conversationsReplies(workspace: FakeWorkspace, params: Params): Params {
  const channel = requireConversation(workspace, params);
  const ts = requireString(params, 'ts');
  const thread = workspace.messages(channel).filter((message) => message.ts === ts || message.thread_ts === ts);
  if (!thread.length) throw new SlackApiFailure('thread_not_found');
  const { items, next } = page(thread, params);
  return { messages: items.map((message) => historyJson(message, params)), has_more: next !== undefined, response_metadata: { next_cursor: next ?? '' } };
}
