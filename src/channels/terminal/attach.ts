/**
 * `/attach PATH [message]` at the terminal: a local file goes with a message.
 * With a message after the path, they are sent together; without one, the
 * file waits for the next message typed. A path with spaces is quoted
 * (`/attach "my notes.md"`); `~/` is the home folder.
 */
import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { attachmentKindOf } from '../attachment-kind.js';
import { AttachmentFetchError } from '../../errors.js';
import type { AttachmentMeta, FetchLimits } from '../types.js';

/** The terminal command that attaches a file. */
export const ATTACH_COMMAND = 'attach';

/** What `/attach` was given: the path, and the message typed after it (maybe empty). */
export interface AttachArgs {
  path: string;
  text: string;
}

/**
 * Splits `/attach`'s arguments.
 *
 * @example parseAttachArgs('"my notes.md" sum this up') // { path: 'my notes.md', text: 'sum this up' }
 */
export function parseAttachArgs(args: string): AttachArgs | undefined {
  const quoted = /^(["'])(.+?)\1(?:\s+([\s\S]*))?$/.exec(args);
  const plain = /^(\S+)(?:\s+([\s\S]*))?$/.exec(args);
  const [path, text] = quoted ? [quoted[2]!, quoted[3]] : plain ? [plain[1]!, plain[2]] : [undefined, undefined];
  return path ? { path, text: (text ?? '').trim() } : undefined;
}

/** The attachment for a local file; a sentence saying what is wrong when it cannot be one. */
export function localAttachment(path: string, cwd = process.cwd()): AttachmentMeta | string {
  const absolute = resolve(cwd, path.startsWith('~/') ? `${homedir()}${path.slice(1)}` : path);
  try {
    const info = statSync(absolute);
    if (!info.isFile()) return `${path} is not a file.`;
    const name = basename(absolute);
    return { kind: attachmentKindOf(undefined, name), name, sizeBytes: info.size, url: pathToFileURL(absolute).href };
  } catch {
    return `${path}: no such file.`;
  }
}

/** The bytes of a local file attached with `/attach`, within `limits`. */
export async function readLocalAttachment(attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array> {
  if (!attachment.url?.startsWith('file:')) throw new AttachmentFetchError('failed', 'not a local file');
  try {
    const file = await open(fileURLToPath(attachment.url), 'r');
    try {
      const { size } = await file.stat();
      if (size > limits.maxBytes) throw new AttachmentFetchError('too-big', `the file is larger than ${limits.maxBytes} bytes`, limits.maxBytes);
      return await file.readFile({ signal: limits.signal });
    } finally {
      await file.close();
    }
  } catch (error) {
    if (error instanceof AttachmentFetchError) throw error;
    throw new AttachmentFetchError(limits.signal.aborted ? 'timeout' : 'failed', 'the file could not be read');
  }
}
