/**
 * How people's messages are written into the model's conversation: plain in a
 * DM; in a group, each line attributed to its sender, with the recent
 * unaddressed messages of the group in front.
 */
import type { ChatKind, InboundMessage } from '../channels/types.js';
import type { ChatMessage } from '../llm/types.js';
import type { GroupLine, ThreadRecord } from '../engine/history.js';
import type { ReceivedAttachment } from '../engine/attachments/received.js';
import { modelLine, transcriptLines, unopenedLine } from './attachments/describe.js';
import { NO_FILES, type TurnFiles } from './attachments/turn-files.js';
import { imagePartsOf } from './attachments/turn-images.js';

/** A sender's display name made safe to put in brackets. */
function nameTag(name: string): string {
  return name.replace(/[[\]\r\n]/g, ' ').trim().slice(0, 64) || 'someone';
}

/** One group line as the model reads it. */
export function attribute(name: string, text: string): string {
  return `[${nameTag(name)}] ${text}`;
}

/**
 * The user message(s) for inbound messages of one turn. Each file attached is
 * one line after the text: what became of it (`files`), or that it was not
 * opened; audio transcribed comes first, as the person's words; an image saved
 * is also kept as an image part of turn `turn` (the thread's count of turns
 * once this one is counted).
 */
export function userMessagesFor(messages: readonly InboundMessage[], kind: ChatKind, context: readonly GroupLine[], files: TurnFiles = NO_FILES, turn = 0): ChatMessage[] {
  const result: ChatMessage[] = [];
  if (kind === 'group' && context.length) {
    const lines = context.map((line) => attribute(line.sender, line.text));
    result.push({
      role: 'user',
      content: `[Recent messages in this group, not addressed to you; context only]\n${lines.join('\n')}`,
    });
  }
  for (const message of messages) {
    const received = files.byMessage.get(message);
    const images = received ? imagePartsOf(received, turn) : [];
    result.push({ role: 'user', content: contentOf(message, kind, received), ...(images.length ? { images } : {}) });
  }
  return result;
}

/**
 * Keeps group messages as context lines (the latest `keep` of them), shown to
 * the model the next time it is addressed as context, not as requests to act on.
 */
export function keepAsGroupContext(record: Pick<ThreadRecord, 'groupContext'>, messages: readonly InboundMessage[], keep: number): void {
  for (const message of messages) {
    if (message.text.trim()) record.groupContext.push({ sender: message.sender.name, text: message.text.slice(0, 2000), at: message.receivedAt });
  }
  if (record.groupContext.length > keep) record.groupContext.splice(0, record.groupContext.length - keep);
}

function contentOf(message: InboundMessage, kind: ChatKind, received: readonly ReceivedAttachment[] | undefined): string {
  const lines = received ? received.map(modelLine) : message.attachments.map(unopenedLine);
  // What a voice message says is read as the person's words, after what they wrote.
  const text = [message.text, ...transcriptLines(received ?? []), ...lines].filter(Boolean).join('\n');
  return kind === 'group' ? attribute(message.sender.name, text) : text;
}
