/**
 * The files of the messages a turn reads, taken in as the turn starts: each
 * message's files received (intake.ts), the person told in one message of
 * those refused (and of audio not transcribed), and the saved ones
 * remembered in the thread's record.
 */
import { threadKeyOf, type ChatInfo, type InboundMessage } from '../../channels/types.js';
import { inboxId } from '../../engine/inbox.js';
import type { AgentServices } from '../../engine/services.js';
import { SAVED_ATTACHMENTS_KEPT, type SavedAttachment, type ThreadRecord } from '../../engine/thread-record.js';
import type { ReceivedAttachment } from '../../engine/attachments/received.js';
import { refusalNotice, transcriptionNotice, transcriptQuote } from './describe.js';

/** What became of the files of a turn's messages. */
export interface TurnFiles {
  /** Each message's files, in the order of its attachments. */
  byMessage: ReadonlyMap<InboundMessage, ReceivedAttachment[]>;
  /** The files saved, to remember in the thread's record. */
  saved: SavedAttachment[];
  /** What the audio was heard as, to show at the top of the answer (`attachments.showTranscript`). */
  quote?: string;
}

/** No files. */
export const NO_FILES: TurnFiles = { byMessage: new Map(), saved: [] };

/**
 * Receives the files of `messages` and tells the person, once per message,
 * which could not be taken. The thread's earlier files this instance lacks
 * are fetched again first (`record`).
 */
export async function receiveTurnFiles(
  services: Pick<AgentServices, 'attachments' | 'outbox' | 'events' | 'config'>,
  chat: ChatInfo,
  messages: readonly InboundMessage[],
  record?: Pick<ThreadRecord, 'attachments'>,
): Promise<TurnFiles> {
  if (record?.attachments?.length) await services.attachments.restore(chat, record.attachments);
  if (!messages.some((message) => message.attachments.length)) return NO_FILES;
  const byMessage = new Map<InboundMessage, ReceivedAttachment[]>();
  const saved: SavedAttachment[] = [];
  const quotes: string[] = [];
  for (const message of messages) {
    if (!message.attachments.length) continue;
    const received = await services.attachments.receive(chat, message);
    byMessage.set(message, received);
    for (const [i, item] of received.entries()) {
      const kind = message.attachments[i]?.kind ?? 'other';
      services.events.emit('attachment', item.status === 'saved' ? { channel: chat.channel, kind, outcome: 'saved', sizeBytes: item.saved.sizeBytes } : { channel: chat.channel, kind, outcome: 'refused', reason: item.reason });
    }
    for (const item of received) if (item.status === 'saved') saved.push(item.saved);
    const notice = refusalNotice(received);
    // Named, so that a turn run again after a restart does not tell it twice.
    if (notice) await services.outbox.deliver(chat, notice, `attachments:${inboxId(message)}`, { replyTo: message.messageId });
    await tellTranscription(services, chat, message, received);
    const quote = services.config.attachments.showTranscript ? transcriptQuote(received) : undefined;
    if (quote) quotes.push(quote);
  }
  return { byMessage, saved, ...(quotes.length ? { quote: quotes.join('\n') } : {}) };
}

/** Tells the person of audio not transcribed: each failure, and once per conversation that transcription is not set up. */
async function tellTranscription(services: Pick<AgentServices, 'attachments' | 'outbox'>, chat: ChatInfo, message: InboundMessage, received: readonly ReceivedAttachment[]): Promise<void> {
  const off = received.some((item) => item.status === 'saved' && item.transcript?.status === 'off');
  const tellOff = off && (await services.attachments.voice?.tellOff(threadKeyOf(chat), inboxId(message))) === true;
  const notice = transcriptionNotice(received, { tellOff, hasText: message.text.trim() !== '' });
  // Named, so that a turn run again after a restart does not tell it twice.
  if (notice) await services.outbox.deliver(chat, notice, `transcription:${inboxId(message)}`, { replyTo: message.messageId });
}

/** Adds `saved` to the files the thread remembers (the latest {@link SAVED_ATTACHMENTS_KEPT}). */
export function rememberFiles(record: Pick<ThreadRecord, 'attachments'>, saved: readonly SavedAttachment[]): void {
  if (!saved.length) return;
  const all = [...(record.attachments ?? []), ...saved];
  record.attachments = all.slice(-SAVED_ATTACHMENTS_KEPT);
}
