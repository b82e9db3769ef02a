/**
 * What kind of file an attachment is, from a MIME type or, without one, from
 * the file name's extension: one rule for every adapter and for the type the
 * agent sniffs from the bytes.
 */
import { extname } from 'node:path';

/** What a file is, as far as the agent cares: voice messages are audio, PDFs and text files documents. */
export type AttachmentKind = 'image' | 'audio' | 'document' | 'video' | 'other';

/** Types that are documents without being `text/*`. */
const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/json',
  'application/xml',
  'application/rtf',
  'application/msword',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
]);

/** Extensions that say the kind when no type is given. */
const EXTENSION_KINDS: Record<string, AttachmentKind> = {
  '.jpg': 'image', '.jpeg': 'image', '.png': 'image', '.gif': 'image', '.webp': 'image', '.heic': 'image',
  '.mp3': 'audio', '.ogg': 'audio', '.oga': 'audio', '.opus': 'audio', '.m4a': 'audio', '.wav': 'audio', '.flac': 'audio',
  '.mp4': 'video', '.mov': 'video', '.webm': 'video', '.mkv': 'video',
  '.txt': 'document', '.md': 'document', '.markdown': 'document', '.csv': 'document', '.json': 'document', '.pdf': 'document',
  '.log': 'document', '.yaml': 'document', '.yml': 'document', '.xml': 'document', '.docx': 'document', '.xlsx': 'document',
};

/**
 * The kind of a file.
 *
 * @example attachmentKindOf('audio/ogg', 'voice.ogg') // 'audio'
 * @example attachmentKindOf(undefined, 'notes.md') // 'document'
 */
export function attachmentKindOf(mimeType: string | undefined, name: string): AttachmentKind {
  const type = (mimeType ?? '').split(';')[0]!.trim().toLowerCase();
  const top = type.split('/')[0];
  if (top === 'image' || top === 'audio' || top === 'video') return top;
  if (top === 'text' || DOCUMENT_TYPES.has(type)) return 'document';
  if (type && type !== 'application/octet-stream') return 'other';
  return EXTENSION_KINDS[extname(name).toLowerCase()] ?? 'other';
}
