/**
 * Downloading a file a person sent: `getFile` gives its path, then the bytes
 * come from `/file/bot<token>/<path>`. That URL holds the bot token, so it is
 * made here, at download time, and never leaves this file: the attachment
 * keeps only the `file_id`, and errors name neither.
 */
import { GrammyError, type Api } from 'grammy';
import { AttachmentFetchError } from '../../errors.js';
import { asFetchError, downloadBytes } from '../download.js';
import type { AttachmentMeta, FetchLimits } from '../types.js';
import { grammySignal } from './signal.js';

/** The largest file the Bot API lets a bot download. */
export const TELEGRAM_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

/** Where the files are: the Bot API's address and the token. */
export interface FileSource {
  api: Api;
  token: string;
  apiRoot?: string;
}

/** The bytes of `attachment` (a file of a message the bot received), within `limits` and Telegram's 20 MB. */
export async function fetchTelegramFile(source: FileSource, attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array> {
  const maxBytes = Math.min(limits.maxBytes, TELEGRAM_DOWNLOAD_LIMIT);
  if (!attachment.fileId) throw new AttachmentFetchError('failed', 'the message names no file to download');
  if ((attachment.sizeBytes ?? 0) > maxBytes) throw new AttachmentFetchError('too-big', `the file is larger than ${maxBytes} bytes`, maxBytes);
  const path = await filePathOf(source.api, attachment.fileId, limits.signal);
  const root = source.apiRoot ?? 'https://api.telegram.org';
  return downloadBytes(`${root}/file/bot${source.token}/${path}`, { maxBytes, signal: limits.signal });
}

/** getFile's `file_path`; Telegram refuses files over 20 MB there. */
async function filePathOf(api: Api, fileId: string, signal: AbortSignal): Promise<string> {
  try {
    const file = await api.getFile(fileId, grammySignal(signal));
    if (!file.file_path) throw new AttachmentFetchError('failed', 'Telegram gave no path for the file');
    return file.file_path;
  } catch (error) {
    if (error instanceof GrammyError && /too big/i.test(error.description)) {
      throw new AttachmentFetchError('too-big', `the file is larger than Telegram lets bots download (${TELEGRAM_DOWNLOAD_LIMIT} bytes)`, TELEGRAM_DOWNLOAD_LIMIT);
    }
    if (error instanceof GrammyError) throw new AttachmentFetchError('failed', `Telegram refused the download (${error.error_code})`);
    throw asFetchError(error, signal);
  }
}
