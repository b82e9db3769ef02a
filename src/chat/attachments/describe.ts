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
import type { TranscriptOutcome } from '../../engine/attachments/voice.js';

/** The longest transcript the model reads in the message; the whole one is in its file. */
const MAX_TRANSCRIPT_CHARS = 20_000;
/** The longest transcript quoted to the person at the top of the answer. */
const MAX_QUOTE_CHARS = 200;

/** The line the model reads for one file. */
export function modelLine(received: ReceivedAttachment): string {
  if (received.status === 'refused') return `[attached: ${received.name}, not received: it ${received.why}. The person has been told.]`;
  const { saved } = received;
  const what = `${fileName(saved)} (${describedType(saved)}, ${sizeText(saved.sizeBytes)})`;
  const now = whatNow(saved, received.transcript);
  return `[attached: ${what}, saved in the workspace as ${saved.path}${now ? `; ${now}` : ''}]`;
}

/** What the model can do with a saved file in this version. */
function whatNow(saved: SavedAttachment, transcript?: TranscriptOutcome): string {
  if (transcript?.status === 'done') return `what it says is transcribed above${saved.textPath ? `, and saved in ${saved.textPath}` : ''}`;
  if (transcript?.status === 'off') return 'you cannot hear audio: no transcription service is set up here. Say so if asked about it';
  if (transcript?.status === 'failed') return `it could not be transcribed (${transcript.why}). The person has been told`;
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

/** A saved file's name as shown. */
function fileName(saved: SavedAttachment): string {
  return shownName(saved.path.split('/').pop() ?? saved.path);
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

/** The lines the model reads for what the message's audio says: the person's words, as if written. */
export function transcriptLines(received: readonly ReceivedAttachment[]): string[] {
  return received.flatMap((item) => {
    if (item.status !== 'saved' || item.transcript?.status !== 'done') return [];
    const text = item.transcript.text;
    const shown = text.length > MAX_TRANSCRIPT_CHARS ? `${text.slice(0, MAX_TRANSCRIPT_CHARS)} [cut: the rest is in ${item.saved.textPath}]` : text;
    return [`[transcript of ${fileName(item.saved)}] ${shown}`];
  });
}

/**
 * What the person is shown of what their audio was heard as, one line per
 * file, at the top of the answer: `🎤 "…"`, long ones cut.
 */
export function transcriptQuote(received: readonly ReceivedAttachment[]): string | undefined {
  const lines = received.flatMap((item) => (item.status === 'saved' && item.transcript?.status === 'done' ? [`🎤 "${shortened(item.transcript.text)}"`] : []));
  return lines.length ? lines.join('\n') : undefined;
}

/** `text` on one line, cut at a word near {@link MAX_QUOTE_CHARS} with an ellipsis. */
function shortened(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  if (chars.length <= MAX_QUOTE_CHARS) return flat;
  const cut = chars.slice(0, MAX_QUOTE_CHARS).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_QUOTE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * What the person is told about the message's audio that was not
 * transcribed: each failure, and (when `tellOff`) that no transcription is
 * set up; undefined when there is nothing to tell.
 */
export function transcriptionNotice(received: readonly ReceivedAttachment[], options: { tellOff: boolean; hasText: boolean }): string | undefined {
  const sentences: string[] = [];
  for (const item of received) {
    if (item.status === 'saved' && item.transcript?.status === 'failed') sentences.push(`I could not transcribe ${fileName(item.saved)}: ${item.transcript.why}.`);
  }
  const off = received.some((item) => item.status === 'saved' && item.transcript?.status === 'off');
  if (off && options.tellOff) sentences.push('I cannot listen to voice messages or audio here: no transcription service is set up.');
  if (!sentences.length) return undefined;
  return options.hasText ? `${sentences.join(' ')} The rest of your message is answered.` : sentences.join(' ');
}
