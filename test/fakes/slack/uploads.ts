/**
 * Slack's external file upload, as `files.uploadV2` of @slack/web-api drives
 * it: `files.getUploadURLExternal` (a file name and length) hands out an
 * upload URL, served here on the fake's own port; the client posts the bytes
 * there (as a form with one file part); `files.completeUploadExternal` (the file ids and titles, with
 * `channel_id`, `thread_ts` and `initial_comment`) shares the file into the
 * conversation. Each completed upload is recorded with its name, size, bytes'
 * hash and comment.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseMultipart } from '../http/multipart.js';
import type { Params } from './web-api.js';

/** A file the bot shared. */
export interface UploadRecord {
  fileId: string;
  channel: string;
  threadTs?: string;
  /** The name given to files.getUploadURLExternal. */
  name: string;
  title?: string;
  size: number;
  /** SHA-256 of the bytes posted to the upload URL, hex. */
  sha256: string;
  /** Slack's `filetype`, from the bytes (`png`, `jpg`, `gif`, `pdf`) or else the name: an image is previewed inline. */
  filetype: string;
  /** The `initial_comment`. */
  caption?: string;
}

interface Pending {
  name: string;
  length: number;
  bytes?: Buffer;
}

/** The upload methods and the upload URL. */
export class FileUploads {
  /** Completed uploads, in order. */
  readonly completed: UploadRecord[] = [];
  private readonly pending = new Map<string, Pending>();
  /** HTTP statuses the next posts to an upload URL answer instead of taking the bytes. */
  private readonly failures: number[] = [];
  private next = 1;

  constructor(private readonly baseUrl: () => string) {}

  /** Whether `method` is one of the upload methods. */
  handles(method: string): boolean {
    return method === 'files.getUploadURLExternal' || method === 'files.completeUploadExternal';
  }

  /** Runs an upload method: the fields of an `ok: true` answer, or `{ ok: false, error }`. */
  call(method: string, params: Params): Params {
    return method === 'files.getUploadURLExternal' ? this.uploadUrl(params) : this.complete(params);
  }

  /** The next post to an upload URL answers `status` (413: too large). */
  failNextUpload(status: number): void {
    this.failures.push(status);
  }

  /** Serves a post to an upload URL (`/upload/<file id>`): keeps the bytes. */
  async receive(fileId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const pending = this.pending.get(fileId);
    const failure = this.failures.shift();
    if (failure) return void res.writeHead(failure, { 'content-type': 'text/plain' }).end(failure === 413 ? 'file too large' : 'failed');
    if (!pending) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    // Slack takes the bytes raw, or as the file part of a form (as @slack/web-api posts them).
    const raw = Buffer.concat(chunks);
    const type = req.headers['content-type'] ?? '';
    const part = type.includes('multipart/form-data') ? parseMultipart(raw, type).find((candidate) => candidate.filename !== undefined) : undefined;
    pending.bytes = part ? part.data : raw;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${pending.bytes.length}`);
  }

  private uploadUrl(params: Params): Params {
    const name = typeof params.filename === 'string' ? params.filename : '';
    const length = Number(params.length);
    if (!name || !Number.isInteger(length) || length <= 0) return { ok: false, error: 'invalid_arguments' };
    const fileId = `F0UPLOAD${this.next++}`;
    this.pending.set(fileId, { name, length });
    return { ok: true, upload_url: `${this.baseUrl()}/upload/${fileId}`, file_id: fileId };
  }

  private complete(params: Params): Params {
    const files = Array.isArray(params.files) ? (params.files as { id?: string; title?: string }[]) : [];
    if (!files.length) return { ok: false, error: 'invalid_arguments' };
    const channel = typeof params.channel_id === 'string' ? params.channel_id : undefined;
    const threadTs = typeof params.thread_ts === 'string' && params.thread_ts ? params.thread_ts : undefined;
    if (threadTs && !channel) return { ok: false, error: 'invalid_arguments' };
    const shared = [];
    for (const { id, title } of files) {
      const pending = id ? this.pending.get(id) : undefined;
      // Slack refuses a file whose bytes did not arrive, or not as many as announced.
      if (!pending?.bytes || pending.bytes.length !== pending.length) return { ok: false, error: 'file_upload_size_mismatch' };
      this.pending.delete(id!);
      const record: UploadRecord = {
        fileId: id!,
        channel: channel ?? '',
        name: pending.name,
        size: pending.bytes.length,
        sha256: createHash('sha256').update(pending.bytes).digest('hex'),
        filetype: filetypeOf(pending.bytes, pending.name),
        ...(threadTs ? { threadTs } : {}),
        ...(title ? { title } : {}),
        ...(typeof params.initial_comment === 'string' ? { caption: params.initial_comment } : {}),
      };
      this.completed.push(record);
      shared.push({ id: id!, title: title ?? pending.name, name: pending.name, size: record.size });
    }
    return { ok: true, files: shared };
  }
}

/** The file type Slack reports, from the bytes' magic numbers or else the name's extension. */
function filetypeOf(bytes: Buffer, name: string): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'jpg';
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'gif';
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  return /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? 'binary';
}
