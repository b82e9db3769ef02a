/**
 * The Bot API methods the fake implements, with Telegram's answers and errors
 * for the cases the adapter must handle (bad HTML, too long, not modified,
 * message gone, a callback query answered twice).
 */
import type { BotCommand, BotCommandScope, InlineKeyboardMarkup, User, UserFromGetMe } from 'grammy/types';
import { messageOf, type BotMessageState, type ChatStore } from './chats.js';
import { ApiFailure } from './failure.js';
import type { UpdateFeed } from './feed.js';
import type { FileStore } from './files.js';
import { parseTelegramHtml } from './html.js';
import { sendDocument, sendPhoto, type UploadRecord } from './uploads.js';

/** One sendMessage or editMessageText the fake accepted. */
export interface SentRecord {
  method: 'sendMessage' | 'editMessageText';
  chatId: string;
  messageId: number;
  text: string;
  plainText: string;
  parseMode?: string;
  replyMarkup?: InlineKeyboardMarkup;
  threadId?: number;
  replyTo?: number;
}

/** One answerCallbackQuery. */
export interface CallbackAnswerRecord {
  queryId: string;
  /** Who pressed the button. */
  userId: string;
  text?: string;
  showAlert?: boolean;
  /** Milliseconds between the press and the answer. */
  afterMs: number;
}

/** One sendChatAction. */
export interface ChatActionRecord {
  chatId: string;
  action: string;
  threadId?: number;
}

/** One setMyCommands. */
export interface CommandsRecord {
  commands: BotCommand[];
  scope?: BotCommandScope;
}

/** A callback query the fake has sent to the bot. */
export interface PressRecord {
  userId: string;
  at: number;
  answered: boolean;
}

/** Everything a method handler may read or change. */
export interface MethodContext {
  bot: UserFromGetMe;
  store: ChatStore;
  feed: UpdateFeed;
  presses: Map<string, PressRecord>;
  sent: SentRecord[];
  callbackAnswers: CallbackAnswerRecord[];
  chatActions: ChatActionRecord[];
  commands: CommandsRecord[];
  files: FileStore;
  /** Files the bot uploaded (sendPhoto, sendDocument). */
  uploads: UploadRecord[];
  /** Registers what to do when the client gives up on this request. */
  onAbort(cancel: () => void): void;
}

type Payload = Record<string, unknown>;
type Handler = (payload: Payload, context: MethodContext) => unknown;

/** Telegram's limit on a message's visible text. */
const MESSAGE_LIMIT = 4096;

/** The implemented methods by name. */
export const METHODS: Record<string, Handler> = {
  getMe: (_payload, { bot }) => bot,
  getFile: (payload, { files }) => files.getFile(String(payload.file_id)),
  getUpdates: (payload, { feed, onAbort }) =>
    feed.poll(optionalNumber(payload.offset), optionalNumber(payload.limit), optionalNumber(payload.timeout), onAbort),
  deleteWebhook: (_payload, { feed }) => {
    feed.setWebhook(undefined);
    return true;
  },
  setWebhook: (payload, { feed }) => {
    const url = String(payload.url ?? '');
    if (!url) feed.setWebhook(undefined);
    else feed.setWebhook({ url, ...(payload.secret_token ? { secretToken: String(payload.secret_token) } : {}) });
    return true;
  },
  sendMessage,
  sendPhoto,
  sendDocument,
  editMessageText,
  deleteMessage: (payload, { store }) => {
    const state = store.botMessage(String(payload.chat_id), Number(payload.message_id));
    if (!state || state.deleted) throw new ApiFailure(400, 'Bad Request: message to delete not found');
    state.deleted = true;
    return true;
  },
  answerCallbackQuery: (payload, { presses, callbackAnswers }) => {
    const queryId = String(payload.callback_query_id);
    const press = presses.get(queryId);
    if (!press || press.answered) {
      throw new ApiFailure(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid');
    }
    press.answered = true;
    callbackAnswers.push({
      queryId,
      userId: press.userId,
      afterMs: Date.now() - press.at,
      ...(payload.text !== undefined ? { text: String(payload.text) } : {}),
      ...(payload.show_alert !== undefined ? { showAlert: Boolean(payload.show_alert) } : {}),
    });
    return true;
  },
  sendChatAction: (payload, { chatActions }) => {
    const threadId = optionalNumber(payload.message_thread_id);
    chatActions.push({ chatId: String(payload.chat_id), action: String(payload.action), ...(threadId !== undefined ? { threadId } : {}) });
    return true;
  },
  setMyCommands: (payload, { commands }) => {
    commands.push({ commands: payload.commands as BotCommand[], ...(payload.scope ? { scope: payload.scope as BotCommandScope } : {}) });
    return true;
  },
  getChatMember: (payload, { store }) => ({
    status: store.status(String(payload.chat_id), String(payload.user_id)),
    user: { id: Number(payload.user_id), is_bot: false, first_name: 'User' } satisfies User,
  }),
};

function sendMessage(payload: Payload, context: MethodContext): unknown {
  const chatId = String(payload.chat_id);
  const { text, plainText, parseMode } = checkedText(payload);
  const replyMarkup = checkedMarkup(payload.reply_markup);
  const threadId = optionalNumber(payload.message_thread_id);
  const replyTo = optionalNumber((payload.reply_parameters as { message_id?: number } | undefined)?.message_id);
  const state: BotMessageState = {
    chatId,
    messageId: context.store.nextMessageId(chatId),
    text,
    plainText,
    deleted: false,
    edits: 0,
    ...(parseMode ? { parseMode } : {}),
    ...(replyMarkup ? { replyMarkup, initialReplyMarkup: replyMarkup } : {}),
    ...(threadId !== undefined ? { threadId } : {}),
    ...(replyTo !== undefined ? { replyTo } : {}),
  };
  const message = messageOf(state, context.store.chat(chatId), context.bot);
  context.store.addBotMessage(state);
  context.store.addMessage(message);
  context.sent.push({ method: 'sendMessage', ...recordOf(state) });
  return message;
}

function editMessageText(payload: Payload, context: MethodContext): unknown {
  const chatId = String(payload.chat_id);
  const state = context.store.botMessage(chatId, Number(payload.message_id));
  if (!state && context.store.message(chatId, Number(payload.message_id))) throw new ApiFailure(400, "Bad Request: message can't be edited");
  if (!state || state.deleted) throw new ApiFailure(400, 'Bad Request: message to edit not found');
  const { text, plainText, parseMode } = checkedText(payload);
  // Telegram removes an inline keyboard that an edit does not repeat.
  const replyMarkup = checkedMarkup(payload.reply_markup);
  if (state.text === text && state.parseMode === parseMode && JSON.stringify(state.replyMarkup) === JSON.stringify(replyMarkup)) {
    throw new ApiFailure(
      400,
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    );
  }
  Object.assign(state, { text, plainText, parseMode, replyMarkup, edits: state.edits + 1 });
  context.sent.push({ method: 'editMessageText', ...recordOf(state) });
  return messageOf(state, context.store.chat(chatId), context.bot);
}

function recordOf(state: BotMessageState): Omit<SentRecord, 'method'> {
  return {
    chatId: state.chatId,
    messageId: state.messageId,
    text: state.text,
    plainText: state.plainText,
    ...(state.parseMode ? { parseMode: state.parseMode } : {}),
    ...(state.replyMarkup ? { replyMarkup: state.replyMarkup } : {}),
    ...(state.threadId !== undefined ? { threadId: state.threadId } : {}),
    ...(state.replyTo !== undefined ? { replyTo: state.replyTo } : {}),
  };
}

/** The text, parsed as Telegram would; throws Telegram's errors for bad HTML, empty or too long text. */
function checkedText(payload: Payload): { text: string; plainText: string; parseMode?: string } {
  const text = String(payload.text ?? '');
  const parseMode = payload.parse_mode ? String(payload.parse_mode) : undefined;
  let plainText = text;
  if (parseMode === 'HTML') {
    const parsed = parseTelegramHtml(text);
    if (!parsed.ok) throw new ApiFailure(400, parsed.error);
    plainText = parsed.text;
  }
  if (!plainText.trim()) throw new ApiFailure(400, 'Bad Request: message text is empty');
  if (plainText.length > MESSAGE_LIMIT) throw new ApiFailure(400, 'Bad Request: message is too long');
  return { text, plainText, ...(parseMode ? { parseMode } : {}) };
}

/** An inline keyboard with buttons, or undefined; callback_data over 64 bytes is refused as Telegram does. */
function checkedMarkup(markup: unknown): InlineKeyboardMarkup | undefined {
  const keyboard = (markup as InlineKeyboardMarkup | undefined)?.inline_keyboard;
  if (!keyboard || keyboard.every((row) => row.length === 0)) return undefined;
  for (const button of keyboard.flat()) {
    if ('callback_data' in button && Buffer.byteLength(button.callback_data) > 64) {
      throw new ApiFailure(400, 'Bad Request: BUTTON_DATA_INVALID');
    }
  }
  return markup as InlineKeyboardMarkup;
}

function optionalNumber(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}
