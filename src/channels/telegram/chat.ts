/**
 * Telegram chats and users in pincer's words: which conversation (thread key),
 * what kind of chat, whose message, and how to address a reply back to the
 * same forum topic.
 */
import type { Chat, Message, User } from 'grammy/types';
import type { ChatAddress, ChatInfo, Sender } from '../types.js';

/** The channel name used in addresses and thread keys. */
export const TELEGRAM = 'telegram';

/** The topic a message belongs to, for forum supergroups only; other chats are one thread. */
export function topicOf(message: Pick<Message, 'is_topic_message' | 'message_thread_id'>): string | undefined {
  return message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : undefined;
}

/** The conversation of a message, or undefined for channels, which pincer does not serve. */
export function chatInfoOf(chat: Chat, topic: string | undefined): ChatInfo | undefined {
  if (chat.type === 'channel') return undefined;
  const chatId = String(chat.id);
  const base = { channel: TELEGRAM, chatId, ...(topic ? { subId: topic } : {}) };
  if (chat.type === 'private') return { ...base, kind: 'dm', scope: 'global' };
  return { ...base, kind: 'group', scope: `telegram:chat:${chatId}`, ...(chat.title ? { title: chat.title } : {}) };
}

/** The person behind an update, named as other members see them. */
export function senderOf(user: User): Sender {
  const name = [user.first_name, user.last_name].filter(Boolean).join(' ') || user.username || String(user.id);
  return { id: String(user.id), name, ...(user.is_bot ? { isBot: true } : {}) };
}

/** Where to send: the chat id and, inside a forum topic, its message_thread_id. */
export function targetOf(chat: ChatAddress): { chatId: string; threadOptions: { message_thread_id?: number } } {
  const topic = chat.subId ? Number(chat.subId) : undefined;
  return { chatId: chat.chatId, threadOptions: topic !== undefined && Number.isInteger(topic) ? { message_thread_id: topic } : {} };
}
