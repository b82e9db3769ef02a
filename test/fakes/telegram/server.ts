/**
 * A fake Telegram Bot API server on 127.0.0.1 (port 0) that the real grammY
 * client talks HTTP to at `/bot<token>/<method>`. Tests inject what users do
 * (messages, button presses) and read what the bot did (messages as they
 * currently read, toasts, chat actions, command menus); `failNext` injects
 * Telegram errors (429 with retry_after, bad HTML) or dropped connections.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Chat, Message, MessageEntity, Update, User, UserFromGetMe } from 'grammy/types';
import { parseMultipart } from '../http/multipart.js';
import { ChatStore, messageOf, type BotMessageState } from './chats.js';
import { entitiesFor } from './entities.js';
import { FileStore, type FileInput } from './files.js';
import { ApiFailure, type InjectedFailure } from './failure.js';
import { UpdateFeed, type WebhookDelivery, type WebhookRegistration } from './feed.js';
import type { UploadRecord } from './uploads.js';
import { METHODS, type CallbackAnswerRecord, type ChatActionRecord, type CommandsRecord, type MethodContext, type PressRecord, type SentRecord } from './methods.js';

export type { BotMessageState } from './chats.js';
export type { InjectedFailure } from './failure.js';
export type { DownloadFailure, FileInput } from './files.js';
export type { UploadRecord } from './uploads.js';
export type { CallbackAnswerRecord, ChatActionRecord, CommandsRecord, SentRecord } from './methods.js';

/** A user message to inject. */
export interface UserMessageInput {
  chat: Chat;
  from: User;
  text: string;
  /** Message id (in this chat) being replied to. */
  replyTo?: number;
  /** Forum topic id: the message is sent inside that topic. */
  threadId?: number;
  /** Entities; computed from the text (commands, @mentions) when absent. */
  entities?: MessageEntity[];
  /** A file sent with the message as a document: the text becomes its caption. */
  document?: FileInput;
  /** A picture sent as a photo (not a document): the text becomes its caption. */
  photo?: FileInput & { width: number; height: number };
  /** A voice note (Ogg/Opus) of `duration` seconds: the text, if any, becomes its caption. */
  voice?: FileInput & { duration: number };
}

/** A button press to inject. */
export interface ButtonPressInput {
  chat: Chat;
  from: User;
  messageId: number;
  data: string;
}

/** Options of {@link startFakeTelegram}. */
export interface FakeTelegramOptions {
  /**
   * The bot's privacy mode (Telegram's default for a new bot: on). With it on,
   * in groups the bot receives only commands (`/cmd`, `/cmd@thisbot`), messages
   * that mention it by @username, replies to its messages and service messages,
   * unless it is an administrator of the group. Off: every message.
   */
  privacy?: boolean;
}

/** What {@link FakeTelegram.sendUserMessage} did. */
export interface SentUserMessage {
  /** The update's id; 0 when privacy mode kept the message from the bot. */
  updateId: number;
  message: Message;
  /** Whether the bot is sent the message (false: privacy mode withheld it). */
  delivered: boolean;
}

/** One request the bot made, successful or not. */
export interface CallRecord {
  method: string;
  payload: Record<string, unknown>;
}

/** The running fake. */
export class FakeTelegram {
  /** The bot as getMe describes it. */
  readonly bot: UserFromGetMe = {
    id: 7_000_001,
    is_bot: true,
    first_name: 'Pincer',
    username: 'pincer_test_bot',
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
  } as UserFromGetMe;
  readonly token = `${this.bot.id}:AAF${randomBytes(12).toString('hex')}`;
  readonly sent: SentRecord[] = [];
  readonly callbackAnswers: CallbackAnswerRecord[] = [];
  readonly chatActions: ChatActionRecord[] = [];
  readonly commands: CommandsRecord[] = [];
  readonly calls: CallRecord[] = [];
  /** The files people sent, served by getFile and `/file/bot<token>/<path>`. */
  readonly files = new FileStore();
  /** The files the bot sent (sendPhoto, sendDocument), with their names, sizes, hashes and captions. */
  readonly uploads: UploadRecord[] = [];
  private readonly store = new ChatStore();
  private readonly feed = new UpdateFeed();
  private readonly presses = new Map<string, PressRecord>();
  private readonly failures = new Map<string, (InjectedFailure | undefined)[]>();
  private nextQueryId = 1;

  constructor(
    private readonly server: Server,
    /** Base URL for grammY's `apiRoot` (no trailing slash). */
    readonly apiRoot: string,
    options: FakeTelegramOptions = {},
  ) {
    this.setPrivacy(options.privacy ?? true);
  }

  /** Whether privacy mode is on (getMe reports `can_read_all_group_messages` as its opposite). */
  get privacy(): boolean {
    return !this.bot.can_read_all_group_messages;
  }

  /** Switches privacy mode, as /setprivacy in BotFather does; getMe reports the change. */
  setPrivacy(on: boolean): void {
    (this.bot as { can_read_all_group_messages: boolean }).can_read_all_group_messages = !on;
  }

  /**
   * A user writes `text`. The message is stored in the chat; the bot gets the
   * update unless privacy mode withholds it (see {@link FakeTelegramOptions.privacy}).
   */
  sendUserMessage(input: UserMessageInput): SentUserMessage {
    const chat = this.chatFor(input.chat, input.threadId !== undefined);
    const chatId = String(chat.id);
    const message = {
      message_id: this.store.nextMessageId(chatId),
      date: now(),
      chat,
      from: input.from,
      ...(input.document || input.photo
        ? {
            ...(input.document ? { document: this.files.add(input.document) } : { photo: this.files.addPhoto(input.photo!) }),
            caption: input.text,
            caption_entities: input.entities ?? entitiesFor(input.text),
          }
        : input.voice
          ? { voice: this.files.addVoice(input.voice, input.voice.duration), ...(input.text ? { caption: input.text, caption_entities: input.entities ?? entitiesFor(input.text) } : {}) }
          : { text: input.text, entities: input.entities ?? entitiesFor(input.text) }),
      ...(input.threadId !== undefined ? { message_thread_id: input.threadId, is_topic_message: true } : {}),
      ...this.replyPart(chat, input),
    } as Message;
    if (!message.entities?.length) delete message.entities;
    if (!message.caption_entities?.length) delete message.caption_entities;
    this.store.addMessage(message);
    if (!this.botReceives(message)) return { updateId: 0, message, delivered: false };
    return { updateId: this.feed.push({ message } as Omit<Update, 'update_id'>), message, delivered: true };
  }

  /** Privacy mode as Telegram applies it to a message in a group. */
  private botReceives(message: Message): boolean {
    if (!this.privacy || (message.chat.type !== 'group' && message.chat.type !== 'supergroup')) return true;
    if (['administrator', 'creator'].includes(this.store.status(String(message.chat.id), String(this.bot.id)))) return true;
    if (message.reply_to_message?.from?.id === this.bot.id) return true;
    const text = message.text ?? message.caption ?? '';
    const username = `@${this.bot.username}`.toLowerCase();
    for (const entity of message.entities ?? message.caption_entities ?? []) {
      const value = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
      if (entity.type === 'mention' && value === username) return true;
      if (entity.type === 'bot_command' && (!value.includes('@') || value.endsWith(username))) return true;
    }
    return false;
  }

  /** A user presses an inline button; returns the callback query id. */
  pressButton(input: ButtonPressInput): string {
    const chat = this.chatFor(input.chat, false);
    const chatId = String(chat.id);
    const state = this.store.botMessage(chatId, input.messageId);
    const message = state ? messageOf(state, chat, this.bot) : { message_id: input.messageId, chat, date: 0 };
    const id = String(this.nextQueryId++);
    this.presses.set(id, { userId: String(input.from.id), at: Date.now(), answered: false });
    this.feed.push({
      callback_query: { id, from: input.from, chat_instance: `instance-${chatId}`, data: input.data, message: message as Message },
    });
    return id;
  }

  /** Queues a raw update; with `update_id` set, the same update can be delivered again. */
  injectUpdate(update: Omit<Update, 'update_id'> & { update_id?: number }): number {
    return this.feed.push(update);
  }

  /**
   * Whether the bot confirmed this update: a getUpdates carried a later offset
   * (a poller asks past an update once it has handled it).
   */
  confirmed(updateId: number): boolean {
    return this.feed.confirmedOffset > updateId;
  }

  /** How many times the bot has fetched (or been posted) this update. */
  deliveries(updateId: number): number {
    return this.feed.delivered.filter((id) => id === updateId).length;
  }

  /** The bot's messages in a chat as they read now (edits applied, deleted ones left out). */
  chatMessages(chatId: string | number): BotMessageState[] {
    return this.store.visibleBotMessages(String(chatId));
  }

  /** Makes the next `times` calls of `method` fail as described, after `after` calls that succeed. */
  failNext(method: string, failure: InjectedFailure, times = 1, after = 0): void {
    const queued = [...Array.from({ length: after }, () => undefined), ...Array.from({ length: times }, () => failure)];
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...queued]);
  }

  /** getUpdates stops answering: polls hang with their connections open, as behind a dead proxy. */
  stall(): void {
    this.feed.stall();
  }

  /** getUpdates answers again; polls still hanging get an empty answer. */
  resume(): void {
    this.feed.resume();
  }

  /** How many getUpdates were answered 409 Conflict (a second poller, or a webhook set). */
  get conflicts(): number {
    return this.feed.conflicts;
  }

  /** Sets what getChatMember answers (`creator`, `administrator`, `member`, ...). */
  setMemberStatus(chatId: string | number, userId: string | number, status: string): void {
    this.store.setStatus(String(chatId), String(userId), status);
  }

  /** The webhook registered by the bot, if any. */
  get webhook(): WebhookRegistration | undefined {
    return this.feed.webhook;
  }

  /** Status codes the bot's webhook answered. */
  get webhookDeliveries(): readonly WebhookDelivery[] {
    return this.feed.webhookDeliveries;
  }

  /** Releases held polls and closes every connection. */
  async close(): Promise<void> {
    this.feed.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** Handles one HTTP request (wired by {@link startFakeTelegram}). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.apiRoot);
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) {
      if (file[1] !== this.token) return reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      return this.files.serve(file[2]!, res);
    }
    const route = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!route) return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    if (route[1] !== this.token) return reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const method = route[2]!;
    const payload = { ...Object.fromEntries(url.searchParams), ...(await readPayload(req)) };
    this.calls.push({ method, payload });
    const failure = this.failures.get(method)?.shift();
    if (failure && 'drop' in failure) {
      // The call takes effect (or is refused) as usual; either way its answer is lost.
      if (failure.processed) await (async () => METHODS[method]?.(payload, this.contextFor(res)))().catch(() => undefined);
      return void req.socket.destroy();
    }
    if (failure) return reply(res, failure.error_code, new ApiFailure(failure.error_code, failure.description, failure.retry_after).toBody());
    const handler = METHODS[method];
    if (!handler) return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    try {
      const result = await handler(payload, this.contextFor(res));
      if (!res.writableEnded && !res.destroyed) reply(res, 200, { ok: true, result });
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      if (!res.writableEnded && !res.destroyed) reply(res, error.errorCode, error.toBody());
    }
  }

  private contextFor(res: ServerResponse): MethodContext {
    return {
      bot: this.bot,
      store: this.store,
      feed: this.feed,
      presses: this.presses,
      sent: this.sent,
      callbackAnswers: this.callbackAnswers,
      chatActions: this.chatActions,
      commands: this.commands,
      files: this.files,
      uploads: this.uploads,
      onAbort: (cancel) => res.once('close', cancel),
    };
  }

  /** The chat as the fake remembers it; a message in a topic makes it a forum. */
  private chatFor(chat: Chat, inTopic: boolean): Chat {
    const full = (inTopic ? { ...chat, is_forum: true } : chat) as Chat;
    this.store.rememberChat(full);
    return full;
  }

  /** reply_to_message: the message answered, or in a topic the topic's first message, as Telegram sends it. */
  private replyPart(chat: Chat, input: UserMessageInput): Record<string, unknown> {
    const answered = input.replyTo !== undefined ? this.store.message(String(chat.id), input.replyTo) : undefined;
    if (answered) return { reply_to_message: { ...answered, reply_to_message: undefined } };
    if (input.threadId === undefined) return {};
    const root = {
      message_id: input.threadId,
      message_thread_id: input.threadId,
      is_topic_message: true,
      date: now(),
      chat,
      from: input.from,
      forum_topic_created: { name: 'Topic', icon_color: 7322096 },
    };
    return { reply_to_message: root };
  }
}

/** Starts a fake on 127.0.0.1 with a random port (privacy mode on unless `privacy: false`). */
export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const handlers: { fake?: FakeTelegram } = {};
  const server = createServer((req, res) => {
    handlers.fake!.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, { ok: false, error_code: 500, description: `Internal Server Error: ${String(error)}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake = new FakeTelegram(server, `http://127.0.0.1:${port}`, options);
  handlers.fake = fake;
  return fake;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The request's parameters from a JSON, urlencoded or multipart body. */
async function readPayload(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  if (body.length === 0) return {};
  const type = req.headers['content-type'] ?? '';
  if (type.includes('json')) return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  const payload: Record<string, unknown> = {};
  if (type.includes('multipart/form-data')) {
    // A file part becomes a File, as Telegram reads an upload; other parts are fields.
    for (const part of parseMultipart(body, type)) {
      payload[part.name] = part.filename !== undefined ? new File([part.data], part.filename, { type: part.contentType ?? '' }) : parseField(part.data.toString('utf8'));
    }
    return payload;
  }
  for (const [key, value] of new URLSearchParams(body.toString('utf8'))) payload[key] = parseField(value);
  return payload;
}

/** grammY sends objects in form bodies as JSON text. */
function parseField(value: string): unknown {
  if (!/^[[{]/.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}
