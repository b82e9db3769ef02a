/**
 * Files the bot sends on Telegram (`files_send`): an image as a photo
 * (sendPhoto, shown inline), anything else, or a photo Telegram will not take
 * as one (too large in pixels, an odd format), as a document (sendDocument).
 * grammY uploads the bytes as multipart/form-data. 429s are retried by the
 * API layer; a network failure is not retried blindly (the upload may have
 * gone through): it is left to the caller.
 */
import { GrammyError, InputFile, type Api } from 'grammy';
import type { Message } from 'grammy/types';
import type { Logger } from '../../log.js';
import type { ChatAddress, FileLimits, OutboundFile, SentMessage } from '../types.js';
import { targetOf } from './chat.js';
import { describeError, toChannelError } from './errors.js';

/** What the Bot API takes from a bot: photos up to 10 MB, other files up to 50 MB. */
export const TELEGRAM_FILE_LIMITS: FileLimits = { photoBytes: 10 * 1024 * 1024, documentBytes: 50 * 1024 * 1024 };

/** The methods that upload a file: a network failure of theirs is not retried blindly. */
export const UPLOAD_METHODS: readonly string[] = ['sendPhoto', 'sendDocument'];

/** Telegram's refusals of a photo that it would take as a document. */
const PHOTO_REFUSED = /PHOTO_INVALID_DIMENSIONS|PHOTO_SAVE_FILE_INVALID|IMAGE_PROCESS_FAILED|PHOTO_EXT_INVALID|photo is too big/i;

/** Sends `file` into `chat` (its forum topic kept), as a reply to `replyTo` when given. */
export async function sendTelegramFile(api: Api, log: Logger, chat: ChatAddress, file: OutboundFile, replyTo?: string): Promise<SentMessage> {
  const { chatId, threadOptions } = targetOf(chat);
  const extra = {
    ...threadOptions,
    ...(file.caption ? { caption: file.caption } : {}),
    ...(replyTo ? { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } } : {}),
  };
  const sent = (message: Message) => ({ chat, ids: [String(message.message_id)] });
  if (file.as === 'photo') {
    try {
      return sent(await api.sendPhoto(chatId, new InputFile(file.bytes, file.name), extra));
    } catch (error) {
      if (!(error instanceof GrammyError && error.error_code === 400 && PHOTO_REFUSED.test(error.description))) throw toChannelError(error, 'sendPhoto');
      log.info({ error: describeError(error) }, 'telegram: the image was refused as a photo; sending it as a document');
    }
  }
  try {
    return sent(await api.sendDocument(chatId, new InputFile(file.bytes, file.name), extra));
  } catch (error) {
    throw toChannelError(error, 'sendDocument');
  }
}
