/**
 * The fake's memory of chats: every message in each chat (users' and the
 * bot's), with per-chat message ids as Telegram numbers them, and the latest
 * state of each bot message after edits and deletions.
 */
import type { Chat, InlineKeyboardMarkup, Message, User } from 'grammy/types';

/** A message the bot sent, as it currently reads. */
export interface BotMessageState {
  chatId: string;
  messageId: number;
  /** Text as the bot last set it (HTML source when parse_mode is HTML). */
  text: string;
  /** What a person sees: tags removed, entities decoded. */
  plainText: string;
  parseMode?: string;
  /** Current inline keyboard; undefined once removed. */
  replyMarkup?: InlineKeyboardMarkup;
  /** The keyboard the message was sent with (kept after it is removed). */
  initialReplyMarkup?: InlineKeyboardMarkup;
  threadId?: number;
  replyTo?: number;
  deleted: boolean;
  edits: number;
}

/** Chats, their messages and their members' statuses. */
export class ChatStore {
  private readonly counters = new Map<string, number>();
  private readonly messages = new Map<string, Message[]>();
  private readonly botMessages = new Map<string, BotMessageState[]>();
  private readonly chats = new Map<string, Chat>();
  private readonly statuses = new Map<string, string>();

  /** The next message id of a chat. */
  nextMessageId(chatId: string): number {
    const next = (this.counters.get(chatId) ?? 0) + 1;
    this.counters.set(chatId, next);
    return next;
  }

  /** Remembers a chat the fake has seen, for building messages the bot sends into it. */
  rememberChat(chat: Chat): void {
    this.chats.set(String(chat.id), chat);
  }

  /** The chat with `chatId`; a private chat with that id when unknown. */
  chat(chatId: string): Chat {
    return this.chats.get(chatId) ?? ({ id: Number(chatId), type: 'private', first_name: 'User' } as Chat);
  }

  /** Stores a message of a user or of the bot. */
  addMessage(message: Message): void {
    const key = String(message.chat.id);
    this.messages.set(key, [...(this.messages.get(key) ?? []), message]);
  }

  /** A stored message. */
  message(chatId: string, messageId: number): Message | undefined {
    return this.messages.get(chatId)?.find((message) => message.message_id === messageId);
  }

  /** Stores the state of a new bot message. */
  addBotMessage(state: BotMessageState): void {
    this.botMessages.set(state.chatId, [...(this.botMessages.get(state.chatId) ?? []), state]);
  }

  /** A bot message's state, deleted or not. */
  botMessage(chatId: string, messageId: number): BotMessageState | undefined {
    return this.botMessages.get(chatId)?.find((state) => state.messageId === messageId);
  }

  /** The bot's messages still shown in a chat, oldest first. */
  visibleBotMessages(chatId: string): BotMessageState[] {
    return (this.botMessages.get(chatId) ?? []).filter((state) => !state.deleted);
  }

  /** Sets what getChatMember answers for a user in a chat. */
  setStatus(chatId: string, userId: string, status: string): void {
    this.statuses.set(`${chatId}:${userId}`, status);
  }

  /** A member's status; `member` unless set. */
  status(chatId: string, userId: string): string {
    return this.statuses.get(`${chatId}:${userId}`) ?? 'member';
  }
}

/** A Telegram Message object for a bot message state. */
export function messageOf(state: BotMessageState, chat: Chat, bot: User): Message {
  return {
    message_id: state.messageId,
    date: Math.floor(Date.now() / 1000),
    chat,
    from: bot,
    text: state.plainText,
    ...(state.threadId !== undefined ? { message_thread_id: state.threadId, is_topic_message: true } : {}),
    ...(state.replyMarkup ? { reply_markup: state.replyMarkup } : {}),
  } as Message;
}
