/**
 * The Slack Web API calls the adapter makes, typed and with failures turned
 * into ChannelError. Retries (429 with Retry-After, 5xx, connection errors) are
 * done underneath by `@slack/web-api` with the retry policy given here.
 */
import { webApi, type Logger as BoltLogger } from '@slack/bolt';
import { ChannelError } from '../../errors.js';
import type { SlackBlock } from './blocks.js';
import { toChannelError } from './errors.js';

/** The retry policy of the Web API client (p-retry options). */
export type RetryPolicy = webApi.RetryOptions;

/** Slack's own policy (about 30 minutes of retries): a message outlives an outage of minutes. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = webApi.retryPolicies.tenRetriesInAboutThirtyMinutes;

/** How long one HTTP request may take before it is abandoned (and retried). */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * The Web API base URL with its trailing `/api/`, added when missing, so that
 * `SLACK_API_URL=http://host:port` and `https://host/api` both work.
 * @example slackApiUrl('http://127.0.0.1:9000') // 'http://127.0.0.1:9000/api/'
 */
export function slackApiUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const bare = url.replace(/\/+$/, '');
  return bare.endsWith('/api') ? `${bare}/` : `${bare}/api/`;
}

/** Options shared by every Web API client of the adapter (Bolt's, Socket Mode's and ours). */
export function webClientOptions(apiUrl: string | undefined, retries: RetryPolicy, logger: BoltLogger): webApi.WebClientOptions {
  const options: webApi.WebClientOptions = { retryConfig: retries, logger, timeout: REQUEST_TIMEOUT_MS, rejectRateLimitedCalls: false };
  const base = slackApiUrl(apiUrl);
  if (base) options.slackApiUrl = base;
  return options;
}

/** Who the bot is, from `auth.test`. */
export interface BotIdentity {
  userId: string;
  botId: string;
  teamId: string;
}

/** The fields of `users.info` the adapter reads. */
export interface SlackUser {
  id: string;
  name: string;
  isAdmin: boolean;
  isBot: boolean;
}

/** The fields of `conversations.info` the adapter reads. */
export interface SlackConversation {
  id: string;
  isIm: boolean;
  name?: string;
}

/** A message to post: mrkdwn `text` (also the notification fallback) and its blocks. */
export interface OutgoingMessage {
  channel: string;
  text: string;
  blocks: SlackBlock[];
  threadTs?: string;
  /** Part `part` of the answer named `key` (SendOptions.idempotencyKey), kept as the message's metadata. */
  answer?: { key: string; part: number };
}

/** The metadata event type that marks a part of a named answer. */
export const ANSWER_EVENT = 'pincer_answer';
/** How far back a resumed answer is looked for in a conversation (it was being sent moments before); a page of a thread's replies. */
const RECENT_MESSAGES = 100;

/** Typed Web API calls; every failure surfaces as a ChannelError. */
export class SlackWebApi {
  constructor(readonly client: webApi.WebClient) {}

  /** `auth.test`: the bot's user id, bot id and workspace. */
  async authTest(): Promise<BotIdentity> {
    const result = await this.call('auth.test', () => this.client.auth.test());
    if (!result.user_id || !result.bot_id) throw new ChannelError('slack', 'auth.test did not name a bot user: is SLACK_BOT_TOKEN a bot token (xoxb-)?');
    return { userId: result.user_id, botId: result.bot_id, teamId: result.team_id ?? '' };
  }

  /** `chat.postMessage`; returns the new message's `ts`. */
  async postMessage(message: OutgoingMessage): Promise<string> {
    const result = await this.call('chat.postMessage', () =>
      this.client.chat.postMessage({
        channel: message.channel,
        text: message.text,
        blocks: message.blocks,
        ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
        ...(message.answer ? { metadata: { event_type: ANSWER_EVENT, event_payload: { key: message.answer.key, part: message.answer.part } } } : {}),
      }),
    );
    if (!result.ts) throw new ChannelError('slack', 'chat.postMessage returned no ts');
    return result.ts;
  }

  /**
   * The parts of the answer named `key` among the conversation's (or its
   * thread's) latest {@link RECENT_MESSAGES} messages, by part index:
   * `conversations.history` or `conversations.replies` with their metadata.
   */
  async answerParts(channel: string, threadTs: string | undefined, key: string): Promise<Map<number, string>> {
    const query = { channel, include_all_metadata: true, limit: RECENT_MESSAGES };
    const parts = new Map<number, string>();
    const note = (messages: { ts?: string; metadata?: unknown }[] = []) => {
      for (const message of messages) {
        const metadata = message.metadata as { event_type?: string; event_payload?: { key?: unknown; part?: unknown } } | undefined;
        if (metadata?.event_type === ANSWER_EVENT && metadata.event_payload?.key === key && message.ts) parts.set(Number(metadata.event_payload.part), message.ts);
      }
    };
    if (!threadTs) {
      // Newest first: the latest messages are the first page.
      note((await this.call('conversations.history', () => this.client.conversations.history(query))).messages);
      return parts;
    }
    // A thread's replies come oldest first: page through to its end.
    let cursor: string | undefined;
    for (let page = 0; page < 20; page += 1) {
      const result = await this.call('conversations.replies', () => this.client.conversations.replies({ ...query, ts: threadTs, ...(cursor ? { cursor } : {}) }));
      note(result.messages);
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!result.has_more || !cursor) break;
    }
    return parts;
  }

  /**
   * `files.uploadV2`: files.getUploadURLExternal, the bytes posted to the URL
   * it gives, then files.completeUploadExternal sharing the file into the
   * channel (and thread) with its comment. Returns the file's id.
   */
  async uploadFile(upload: { channel: string; threadTs?: string; name: string; bytes: Uint8Array; comment?: string }): Promise<string> {
    const base = { channel_id: upload.channel, file: Buffer.from(upload.bytes), filename: upload.name, title: upload.name, ...(upload.comment ? { initial_comment: upload.comment } : {}) };
    const args: webApi.FilesUploadV2Arguments = upload.threadTs ? { ...base, thread_ts: upload.threadTs } : base;
    const result = await this.call('files.uploadV2', () => this.client.files.uploadV2(args));
    const completed = (result as { files?: { files?: { id?: string }[] }[] }).files ?? [];
    const id = completed[0]?.files?.[0]?.id;
    if (!id) throw new ChannelError('slack', 'files.completeUploadExternal named no file');
    return id;
  }

  /** `chat.update` of one message: its text and its blocks (an empty list removes them). */
  async update(channel: string, ts: string, text: string, blocks: SlackBlock[]): Promise<void> {
    await this.call('chat.update', () => this.client.chat.update({ channel, ts, text, blocks }));
  }

  /** `chat.postEphemeral`: a message only `user` sees, in `channel` (and thread). */
  async postEphemeral(channel: string, user: string, text: string, threadTs?: string): Promise<void> {
    await this.call('chat.postEphemeral', () =>
      this.client.chat.postEphemeral({ channel, user, text, ...(threadTs ? { thread_ts: threadTs } : {}) }),
    );
  }

  /** `users.info`: display name and workspace role. */
  async userInfo(id: string): Promise<SlackUser> {
    const result = await this.call('users.info', () => this.client.users.info({ user: id }));
    const user = result.user;
    const profile = user?.profile;
    const name = profile?.display_name || profile?.real_name || user?.real_name || user?.name || id;
    return { id, name, isAdmin: Boolean(user?.is_admin || user?.is_owner), isBot: Boolean(user?.is_bot) };
  }

  /** `conversations.info`: whether it is a DM, and its name. */
  async conversationInfo(id: string): Promise<SlackConversation> {
    const result = await this.call('conversations.info', () => this.client.conversations.info({ channel: id }));
    const channel = result.channel;
    return { id, isIm: Boolean(channel?.is_im), ...(channel?.name ? { name: channel.name } : {}) };
  }

  private async call<T>(method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toChannelError(error, method);
    }
  }
}
