/**
 * What a received file really is, from its bytes: the type a platform or a
 * sender declares is a claim, and a file whose bytes say otherwise (a
 * `notes.txt` that is a program, a `photo.jpg` that is an archive) is refused.
 * Text has no magic number: valid UTF-8 without NUL bytes counts as text.
 */
import { extname } from 'node:path';
import { attachmentKindOf, type AttachmentKind } from '../../channels/types.js';

/** What the bytes are. */
export interface SniffedType {
  kind: AttachmentKind;
  mimeType: string;
  /** The extension for the type, without the dot (`png`), when it has a usual one. */
  ext?: string;
  /** An archive (zip, tar, 7z, ...): kept as it is, never unpacked. */
  archive: boolean;
}

/** Why the bytes were refused. */
export type SniffProblem =
  /** Neither a known binary format nor text. */
  | { problem: 'unknown' }
  /** The bytes are another kind of file than declared. */
  | { problem: 'mismatch'; declared: string; found: string };

/** Archive and compressed types: never unpacked. */
const ARCHIVES = new Set([
  'application/zip',
  'application/x-tar',
  'application/gzip',
  'application/x-bzip2',
  'application/x-xz',
  'application/x-7z-compressed',
  'application/x-rar-compressed',
  'application/vnd.rar',
  'application/zstd',
  'application/x-lzip',
  'application/x-compress',
  'application/x-cpio',
  'application/x-rpm',
  'application/x-deb',
  'application/vnd.debian.binary-package',
]);

/** Text types by extension, for text with no type declared (or a vague one). */
const TEXT_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};

/**
 * The type of `bytes`, checked against what was declared (`declaredType`,
 * and the name's extension).
 *
 * @example await sniffType(pngBytes, 'image/png', 'cat.png') // { kind: 'image', mimeType: 'image/png', ext: 'png', archive: false }
 */
export async function sniffType(bytes: Uint8Array, declaredType: string | undefined, name: string): Promise<SniffedType | SniffProblem> {
  // Loaded with the first file (about 30 modules), not at every start.
  const { fileTypeFromBuffer } = await import('file-type');
  const found = await fileTypeFromBuffer(bytes);
  const sniffed = found ? binaryType(found.mime, found.ext) : textType(bytes, declaredType, name);
  if (!sniffed) return { problem: 'unknown' };
  const claim = claimedType(declaredType, name);
  const declared = familyOf(claim, name);
  const actual = familyOf(sniffed.mimeType, name, sniffed.archive);
  if (declared !== undefined && declared !== actual) {
    return { problem: 'mismatch', declared: claim ?? 'unknown', found: sniffed.mimeType };
  }
  // Audio and video share containers (WebM, MP4): one declared audio is audio, to be transcribed.
  if (sniffed.kind === 'video' && claim && attachmentKindOf(claim, name) === 'audio') return { ...sniffed, kind: 'audio', mimeType: sniffed.mimeType.replace(/^video\//, 'audio/') };
  return sniffed;
}

/** Whether `mimeType` is an archive or a compressed file. */
export function isArchiveType(mimeType: string): boolean {
  return ARCHIVES.has(mimeType);
}

function binaryType(mimeType: string, ext: string): SniffedType {
  const archive = ARCHIVES.has(mimeType);
  return { kind: archive ? 'other' : attachmentKindOf(mimeType, `file.${ext}`), mimeType, ext, archive };
}

/** Text: valid UTF-8 with no NUL byte; typed by the declared text type, else the extension. */
function textType(bytes: Uint8Array, declaredType: string | undefined, name: string): SniffedType | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  const declared = bareType(declaredType);
  const mimeType = declared && isTextType(declared) ? declared : (TEXT_TYPES[extname(name).toLowerCase()] ?? 'text/plain');
  return { kind: 'document', mimeType, archive: false };
}

function isTextType(type: string): boolean {
  return type.startsWith('text/') || ['application/json', 'application/xml', 'application/yaml', 'application/x-yaml'].includes(type);
}

/**
 * What the sender claims the file is: the declared type, or without one (or
 * a vague `application/octet-stream`) the type its name's extension says.
 */
function claimedType(declaredType: string | undefined, name: string): string | undefined {
  const type = bareType(declaredType);
  if (type && type !== 'application/octet-stream') return type;
  const ext = extname(name).toLowerCase();
  if (ext === '.txt') return 'text/plain';
  if (ext === '.pdf') return 'application/pdf';
  if (TEXT_TYPES[ext]) return TEXT_TYPES[ext];
  const kind = attachmentKindOf(undefined, name);
  return kind === 'image' || kind === 'audio' || kind === 'video' ? `${kind}/*` : undefined;
}

/**
 * The family a type belongs to, for comparing a claim with the bytes: image,
 * media (audio and video share containers: an `.ogg` or `.webm` may be
 * either), pdf, text, archive, or other. Undefined: no claim to compare.
 */
function familyOf(type: string | undefined, name: string, archive = false): string | undefined {
  if (archive || (type && ARCHIVES.has(type))) return 'archive';
  const kind = type ? attachmentKindOf(type, name) : undefined;
  if (kind === undefined) return undefined;
  if (kind === 'audio' || kind === 'video') return 'media';
  if (type === 'application/pdf') return 'pdf';
  if (kind === 'document' && type && isTextType(type)) return 'text';
  return kind;
}

function bareType(type: string | undefined): string | undefined {
  const bare = type?.split(';')[0]?.trim().toLowerCase();
  return bare || undefined;
}
