/**
 * The Bot API's upload methods, sendPhoto and sendDocument, as the fake
 * serves them: grammY posts an InputFile as multipart/form-data, the file in a
 * part named by a random id and the method's field set to `attach://<id>`
 * (a file may also be the field itself). Each upload is recorded with its
 * name, size, bytes' hash and caption; Telegram's limits answer as Telegram
 * does (a photo over 10 MB, a file over 50 MB: 413).
 */
import { createHash } from 'node:crypto';
import type { Message } from 'grammy/types';
import { ApiFailure } from './failure.js';
import type { ChatStore } from './chats.js';

/** One file the bot uploaded. */
export interface UploadRecord {
  method: 'sendPhoto' | 'sendDocument';
  chatId: string;
  messageId: number;
  /** The file name of the multipart part. */
  name: string;
  /** The part's declared type. */
  mimeType: string;
  size: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  caption?: string;
  threadId?: number;
  replyTo?: number;
}

/** Telegram's limits for a bot's uploads. */
const PHOTO_LIMIT = 10 * 1024 * 1024;
const DOCUMENT_LIMIT = 50 * 1024 * 1024;

type Payload = Record<string, unknown>;

/** What an upload handler reads and changes. */
export interface UploadContext {
  store: ChatStore;
  bot: { id: number; first_name: string; username?: string };
  uploads: UploadRecord[];
}

/** sendPhoto: the `photo` field. */
export function sendPhoto(payload: Payload, context: UploadContext): Promise<Message> {
  return upload('sendPhoto', 'photo', payload, context);
}

/** sendDocument: the `document` field. */
export function sendDocument(payload: Payload, context: UploadContext): Promise<Message> {
  return upload('sendDocument', 'document', payload, context);
}

async function upload(method: UploadRecord['method'], field: 'photo' | 'document', payload: Payload, context: UploadContext): Promise<Message> {
  const file = fileOf(payload, field);
  const bytes = Buffer.from(await file.arrayBuffer());
  if (bytes.length > DOCUMENT_LIMIT) throw new ApiFailure(413, 'Request Entity Too Large');
  if (field === 'photo' && bytes.length > PHOTO_LIMIT) throw new ApiFailure(400, 'Bad Request: photo is too big');
  const chatId = String(payload.chat_id);
  const messageId = context.store.nextMessageId(chatId);
  const caption = typeof payload.caption === 'string' ? payload.caption : undefined;
  const threadId = payload.message_thread_id !== undefined ? Number(payload.message_thread_id) : undefined;
  const replyTo = (payload.reply_parameters as { message_id?: number } | undefined)?.message_id;
  const record: UploadRecord = {
    method,
    chatId,
    messageId,
    name: file.name,
    mimeType: file.type,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    ...(caption !== undefined ? { caption } : {}),
    ...(threadId !== undefined ? { threadId } : {}),
    ...(replyTo !== undefined ? { replyTo } : {}),
  };
  context.uploads.push(record);
  const fileId = `${field}-${record.sha256.slice(0, 16)}`;
  const media =
    field === 'photo'
      ? { photo: [{ file_id: fileId, file_unique_id: fileId, width: 1, height: 1, file_size: bytes.length }] }
      : { document: { file_id: fileId, file_unique_id: fileId, file_name: file.name, mime_type: file.type, file_size: bytes.length } };
  const message = {
    message_id: messageId,
    date: Math.floor(Date.now() / 1000),
    chat: context.store.chat(chatId),
    from: { id: context.bot.id, is_bot: true, first_name: context.bot.first_name, ...(context.bot.username ? { username: context.bot.username } : {}) },
    ...media,
    ...(caption !== undefined ? { caption } : {}),
    ...(threadId !== undefined ? { message_thread_id: threadId } : {}),
  } as Message;
  context.store.addMessage(message);
  return message;
}

/** The uploaded file of `field`: the part itself, or the part its `attach://<id>` names. */
function fileOf(payload: Payload, field: string): File {
  const value = payload[field];
  if (value instanceof File) return value;
  const attached = typeof value === 'string' && value.startsWith('attach://') ? payload[value.slice('attach://'.length)] : undefined;
  if (attached instanceof File) return attached;
  throw new ApiFailure(400, `Bad Request: there is no ${field} in the request`);
}
