/**
 * How received files are told: one line per file for the model (what it is,
 * where it was saved, what it can and cannot do with it yet), and one
 * sentence per refused file for the person.
 */
import type { AttachmentMeta } from '../../channels/types.js';
import { canDownscale } from '../../engine/attachments/downscale.js';
import { isArchiveType } from '../../engine/attachments/sniff.js';
import { shownName, sizeText, type ReceivedAttachment } from '../../engine/attachments/received.js';
import type { SavedAttachment } from '../../engine/thread-record.js';

/** The line the model reads for one file. */
export function modelLine(received: ReceivedAttachment): string {
  if (received.status === 'refused') return `[attached: ${received.name}, not received: it ${received.why}. The person has been told.]`;
  const { saved } = received;
  const what = `${shownName(saved.path.split('/').pop() ?? saved.path)} (${describedType(saved)}, ${sizeText(saved.sizeBytes)})`;
  const now = whatNow(saved);
  return `[attached: ${what}, saved in the workspace as ${saved.path}${now ? `; ${now}` : ''}]`;
}

/** What the model can do with a saved file in this version. */
function whatNow(saved: SavedAttachment): string {
  if (saved.kind === 'document' && isText(saved.mimeType)) return 'read it with files_read';
  // Whether the model sees an image is decided when a request is made (turn-images.ts), not here.
  if (saved.kind === 'image') return canDownscale(saved.mimeType) ? '' : 'you cannot see images of this type: say so if asked about it';
  if (saved.kind === 'audio') return 'you cannot hear audio yet: say so if asked about it';
  if (saved.kind === 'video') return 'you cannot watch videos yet: say so if asked about it';
  if (saved.mimeType === 'application/pdf' && saved.textPath) return `its text is in ${saved.textPath}: read that with files_read`;
  if (saved.mimeType === 'application/pdf') return 'it has no text to read (a scan?), and you cannot see its pages yet: say so if asked about its contents';
  if (isArchiveType(saved.mimeType)) return 'archives are kept as they are, never unpacked';
  return 'you cannot open this type of file yet';
}

function describedType(saved: SavedAttachment): string {
  if (isArchiveType(saved.mimeType)) return `archive, ${saved.mimeType}`;
  return saved.kind === 'other' ? saved.mimeType : `${saved.kind}, ${saved.mimeType}`;
}

function isText(mimeType: string): boolean {
  return mimeType.startsWith('text/') || ['application/json', 'application/xml', 'application/yaml', 'application/x-yaml'].includes(mimeType);
}

/** The line the model reads for a file of a message that was not opened (its turn was stopped). */
export function unopenedLine(attachment: AttachmentMeta): string {
  return `[attached: ${shownName(attachment.name)} (${attachment.kind}), not opened]`;
}

/** What the person is told about the files not taken from one message; undefined when all were. */
export function refusalNotice(received: readonly ReceivedAttachment[]): string | undefined {
  const lines = received.flatMap((item) => (item.status === 'refused' ? [`${item.name} ${item.why}.`] : []));
  if (!lines.length) return undefined;
  const head = lines.length === 1 ? 'I could not take the attached file:' : 'I could not take these attached files:';
  return `${head} ${lines.join(' ')} The rest of your message is answered.`;
}
