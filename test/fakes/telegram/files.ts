/**
 * Files people send, as the Bot API serves them: `getFile` answers a file's
 * `file_path` (or "file is too big" past 20 MB), and the bytes come from
 * `/file/bot<token>/<file_path>`. A download can be made to fail or hang.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Document, PhotoSize, Voice } from 'grammy/types';
import { ApiFailure } from './failure.js';

/** The Bot API's limit on files a bot may download. */
export const BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

/** A file to send with a message. */
export interface FileInput {
  name: string;
  mimeType?: string;
  bytes: Buffer;
  /** The size Telegram reports, when it must differ from the bytes' (a file too big to hold in a test). */
  size?: number;
}

/** How the download of a file goes wrong. */
export type DownloadFailure = 'status-500' | 'hang';

interface StoredFile {
  path: string;
  bytes: Buffer;
  size: number;
  failure?: DownloadFailure;
}

/** The files the fake holds, by file_id. */
export class FileStore {
  private readonly files = new Map<string, StoredFile>();
  /** file_paths downloaded, in order. */
  readonly downloads: string[] = [];

  private next: { failure?: DownloadFailure; size?: number } = {};

  /** The next file sent is reported at `size` bytes, or its download fails as `failure`. */
  prepareNext(next: { failure?: DownloadFailure; size?: number }): void {
    this.next = next;
  }

  /** Keeps a voice note (Ogg/Opus) and describes it as a message's `voice`; Telegram keeps those under `voice/` as `.oga`. */
  addVoice(file: FileInput, duration: number): Voice {
    const document = this.add(file, 'voice/file_{n}.oga');
    return { file_id: document.file_id, file_unique_id: document.file_unique_id, duration, file_size: document.file_size!, ...(file.mimeType ? { mime_type: file.mimeType } : {}) };
  }

  /** Keeps `file` and describes it as a message's `document`. */
  add(file: FileInput, pathPattern?: string): Document {
    const fileId = `BQAC${randomBytes(12).toString('hex')}`;
    const { failure, size: nextSize } = this.next;
    this.next = {};
    const size = nextSize ?? file.size ?? file.bytes.length;
    const path = pathPattern?.replace('{n}', String(this.files.size)) ?? `documents/file_${this.files.size}${extensionOf(file.name)}`;
    this.files.set(fileId, { path, bytes: file.bytes, size, ...(failure ? { failure } : {}) });
    return { file_id: fileId, file_unique_id: fileId.slice(-8), file_name: file.name, file_size: size, ...(file.mimeType ? { mime_type: file.mimeType } : {}) };
  }

  /**
   * Keeps `file` and describes it as a message's `photo`: one size, the
   * bytes as sent (`width` and `height` as given; Telegram's own smaller
   * sizes are left out).
   */
  addPhoto(file: FileInput & { width: number; height: number }): PhotoSize[] {
    const { file_id, file_unique_id, file_size } = this.add(file);
    return [{ file_id, file_unique_id, width: file.width, height: file.height, ...(file_size ? { file_size } : {}) }];
  }

  /** getFile's answer. */
  getFile(fileId: string): { file_id: string; file_unique_id: string; file_size: number; file_path: string } {
    const file = this.files.get(fileId);
    if (!file) throw new ApiFailure(400, 'Bad Request: invalid file_id');
    if (file.size > BOT_DOWNLOAD_LIMIT) throw new ApiFailure(400, 'Bad Request: file is too big');
    return { file_id: fileId, file_unique_id: fileId.slice(-8), file_size: file.size, file_path: file.path };
  }

  /** Serves `/file/bot<token>/<path>`; the token was checked by the caller. */
  serve(path: string, res: ServerResponse): void {
    const file = [...this.files.values()].find((candidate) => candidate.path === path);
    if (!file) return void res.writeHead(404).end('Not Found');
    this.downloads.push(path);
    // Headers out, then nothing: a download that stalls midway.
    if (file.failure === 'hang') return void res.writeHead(200, { 'content-length': String(file.bytes.length) }).flushHeaders();
    if (file.failure === 'status-500') return void res.writeHead(500).end('Internal Server Error');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes.length) }).end(file.bytes);
  }
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot) : '';
}
