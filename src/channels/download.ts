/**
 * Downloads an attachment's bytes over HTTP for an adapter, within a size
 * limit and a time limit. Redirects are followed by hand so that credentials
 * (Slack's bearer token) go to the host they were meant for only. Errors are
 * `AttachmentFetchError`s whose messages never hold the URL: Telegram's holds
 * the bot token.
 */
import { AttachmentFetchError } from '../errors.js';
import type { FetchLimits } from './types.js';

/** How a download is made. */
export interface DownloadOptions extends FetchLimits {
  /** Sent to the first URL's origin only: a redirect to another origin goes without them. */
  credentials?: Record<string, string>;
  /**
   * A web page instead of the file is a refusal in disguise (Slack answers its
   * sign-in page, status 200, to a token without `files:read`): the download
   * fails with this message.
   */
  htmlMeans?: string;
}

/** Redirects followed before the download is given up. */
const MAX_REDIRECTS = 5;

/**
 * The bytes at `url`, at most `maxBytes` of them.
 *
 * @example await downloadBytes(file.url_private, { maxBytes, signal, credentials: { authorization: `Bearer ${token}` } })
 */
export async function downloadBytes(url: string, options: DownloadOptions): Promise<Uint8Array> {
  try {
    const response = await fetchFollowing(url, options);
    if (!response.ok) throw new AttachmentFetchError('failed', `the file server answered ${response.status}`);
    if (options.htmlMeans && /^text\/html\b/i.test(response.headers.get('content-type') ?? '')) {
      await response.body?.cancel();
      throw new AttachmentFetchError('failed', options.htmlMeans);
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > options.maxBytes) throw tooBig(options.maxBytes);
    return await readCapped(response, options.maxBytes);
  } catch (error) {
    throw asFetchError(error, options.signal);
  }
}

/** The response at the end of the redirects; credentials only while the origin is the first one's. */
async function fetchFollowing(url: string, options: DownloadOptions): Promise<Response> {
  const origin = new URL(url).origin;
  let at = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    const headers = new URL(at).origin === origin ? (options.credentials ?? {}) : {};
    const response = await fetch(at, { headers, redirect: 'manual', signal: options.signal });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) return response;
    await response.body?.cancel();
    at = new URL(location, at).href;
  }
  throw new AttachmentFetchError('failed', 'the file server redirected too many times');
}

/** The body, failing as soon as it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooBig(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function tooBig(maxBytes: number): AttachmentFetchError {
  return new AttachmentFetchError('too-big', `the file is larger than ${maxBytes} bytes`, maxBytes);
}

/** Any failure as an AttachmentFetchError without the URL (fetch's own errors may name it). */
export function asFetchError(error: unknown, signal: AbortSignal): AttachmentFetchError {
  if (error instanceof AttachmentFetchError) return error;
  if (signal.aborted) return new AttachmentFetchError('timeout', 'the download took too long');
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return new AttachmentFetchError('failed', typeof code === 'string' ? `the download failed (${code})` : 'the download failed');
}
