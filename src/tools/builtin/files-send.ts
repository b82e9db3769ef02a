/**
 * The `files_send` tool: sends a file of the caller's workspace (or of a
 * shared folder) into the conversation, as a photo when its bytes are an image
 * the platform shows inline, else as a document. It asks first, like
 * `files_write`; the prompt names the file and its size, and the approved call
 * sends exactly those bytes (their hash is pinned in the call). The
 * conversation's outlet sends it once: a rerun of the turn does not post it again.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { FileOutlet, FileToSend, Tool, ToolContext } from '../types.js';
import { WorkspaceView } from './lib/workspace-view.js';
import type { WorkspaceSettings } from './lib/workspaces.js';

/** Longest caption: Telegram's limit for a photo's or a document's caption. */
export const MAX_CAPTION_CHARS = 1024;

/** Image types every platform shows inline as a picture (a GIF goes as a document: Telegram's photos do not move). */
const PHOTO_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);

const parameters = z.object({
  path: z.string().min(1).max(1024).describe('File relative to the workspace'),
  caption: z.string().max(MAX_CAPTION_CHARS).optional().describe('A short text shown with the file'),
  approved: z
    .object({ bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })
    .optional()
    .describe('Filled in by the bot when the person is asked; leave it out'),
});

type Params = z.infer<typeof parameters>;

/** A file read for sending, with what the prompt and the platform need. */
export interface ReadFile {
  shown: string;
  file: FileToSend;
  sha256: string;
}

/** Creates the files_send tool over the workspaces of `settings`. */
export function filesSendTool(settings: WorkspaceSettings): Tool<typeof parameters> {
  return {
    name: 'files_send',
    description: 'Send a file of the workspace to this conversation (images are shown as photos, other files as documents), with an optional caption.',
    parameters,
    readOnly: false,
    requiresApproval: () => 'unlessAutoApproved',
    timeoutMs: 120_000,
    describe: ({ path, caption, approved }) =>
      `Send ${basename(path)}${approved ? ` (${formatBytes(approved.bytes)})` : ''} to this conversation${caption ? ` with the caption "${caption}"` : ''}`,
    async precheck(params, ctx) {
      const { file, sha256 } = await readForSend(settings, params, ctx);
      const { approved: _ignored, ...rest } = params;
      return { ...rest, approved: { bytes: file.bytes.byteLength, sha256 } };
    },
    async execute(params, ctx) {
      const outlet = outletOf(ctx);
      const { shown, file, sha256 } = await readForSend(settings, params, ctx);
      if (params.approved && (params.approved.sha256 !== sha256 || params.approved.bytes !== file.bytes.byteLength)) {
        throw new ToolError(
          `${shown} changed after the person was asked to send it (${formatBytes(params.approved.bytes)} then, ${formatBytes(file.bytes.byteLength)} now); nothing was sent. Ask again to send it as it is now.`,
        );
      }
      const key = deliveryKey(sha256, params.caption);
      const outcome = await outlet.send(file, key);
      if (!outcome.ok) throw new ToolError(failureText(shown, outlet, outcome));
      const size = formatBytes(file.bytes.byteLength);
      if (outcome.before) return `${shown} (${size}) had already been sent to this conversation in this turn (by an earlier call, or before a restart); it was not sent again.`;
      if (!outlet.limits) return `The path and size of ${shown} (${size}) were shown to the person (this channel shows where a file is instead of sending it).`;
      return `Sent ${shown} (${size}) to the conversation as a ${file.as}.`;
    },
  };
}

/** The outlet of the call's conversation, or the reason there is none. */
function outletOf(ctx: ToolContext): FileOutlet {
  if (!ctx.outlet) throw new ToolError('files can only be sent in a conversation, and this call has none to send to.');
  return ctx.outlet;
}

/**
 * Reads the file to send, within the workspace rules of `files_read` (no
 * absolute path, no `..`, no symlink out) and the size limits of the platform
 * (photo, else document) and of `attachments.maxBytes`, checked before a byte
 * is read.
 */
export async function readForSend(settings: WorkspaceSettings, params: Pick<Params, 'path' | 'caption'>, ctx: ToolContext): Promise<ReadFile> {
  const outlet = outletOf(ctx);
  const { real, shown } = await new WorkspaceView(settings, ctx).existing(params.path);
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ToolError(`"${params.path}" is not a regular file.`);
    checkSize(shown, info.size, outlet);
    const bytes = await handle.readFile();
    checkSize(shown, bytes.byteLength, outlet);
    const mimeType = await typeOf(bytes);
    const photo = PHOTO_TYPES.has(mimeType) && (!outlet.limits || bytes.byteLength <= outlet.limits.photoBytes);
    // Sent under the name the prompt shows (a link's own name, not its target's).
    const file: FileToSend = { name: basename(params.path), bytes, mimeType, as: photo ? 'photo' : 'document', localPath: real };
    if (params.caption) file.caption = params.caption;
    return { shown, file, sha256: createHash('sha256').update(bytes).digest('hex') };
  } finally {
    await handle.close();
  }
}

/** Refuses a file over the platform's document limit or `attachments.maxBytes`, saying which. */
function checkSize(shown: string, size: number, outlet: FileOutlet): void {
  const platform = outlet.limits?.documentBytes;
  if (platform !== undefined && size > platform && platform <= outlet.maxBytes) {
    throw new ToolError(`${shown} is ${formatBytes(size)}, over the ${formatBytes(platform)} that ${outlet.channel} takes from a bot; it cannot be sent here. Tell the person, or send a smaller file.`);
  }
  if (size > outlet.maxBytes) {
    throw new ToolError(`${shown} is ${formatBytes(size)}, over the ${formatBytes(outlet.maxBytes)} the bot sends at most (attachments.maxBytes); it was not sent. Tell the person, or send a smaller file.`);
  }
}

/** The type of the bytes: a known binary format, else text (valid UTF-8 without NUL), else unknown. */
async function typeOf(bytes: Uint8Array): Promise<string> {
  // Loaded with the first file (about 30 modules), not at every start.
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(bytes);
  if (found) return found.mime;
  if (bytes.includes(0)) return 'application/octet-stream';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return 'text/plain';
  } catch {
    return 'application/octet-stream';
  }
}

/** What names one send in its turn: the bytes and the caption (the same file with another caption is another message). */
function deliveryKey(sha256: string, caption: string | undefined): string {
  const captionHash = createHash('sha256').update(caption ?? '').digest('hex').slice(0, 16);
  return `${sha256.slice(0, 32)}:${captionHash}`;
}

/** The model's words for a send that did not happen. */
function failureText(shown: string, outlet: FileOutlet, outcome: Extract<Awaited<ReturnType<FileOutlet['send']>>, { ok: false }>): string {
  switch (outcome.reason) {
    case 'uncertain':
      return `an earlier attempt to send ${shown} was cut short by a restart, and ${outlet.channel} may have it already; it was not sent again, so that it does not arrive twice. Ask the person whether it arrived.`;
    case 'refused':
      return `${outlet.channel} refused ${shown}: ${outcome.detail}. Nothing was sent.`;
    default:
      return `sending ${shown} to ${outlet.channel} failed (${outcome.detail}). It most likely did not arrive, but a connection that broke midway may have delivered it: ask the person before sending it again.`;
  }
}

/** A size in bytes for people: `812 bytes`, `14.2 KB`, `3.1 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
