/**
 * What became of a file attached to a message (saved, or refused with a
 * reason), and the small helpers that put its size and name in words.
 */
import type { SavedAttachment } from '../thread-record.js';
import type { TranscriptOutcome } from './voice.js';

/** Why a file was not taken. */
export type RefusalReason = 'too-big' | 'message-total' | 'daily' | 'timeout' | 'failed' | 'unknown-type' | 'mismatch' | 'unsupported';

/** What became of one attached file. */
export type ReceivedAttachment =
  | {
      status: 'saved';
      saved: SavedAttachment;
      /** For audio: what it says, or why that is not known. */
      transcript?: TranscriptOutcome;
    }
  | {
      status: 'refused';
      /** The name as sent, made safe to show. */
      name: string;
      reason: RefusalReason;
      /** Why, in a few words, after the file's name: `is 30 MB, over the limit of 20 MB per file`. */
      why: string;
    };

/**
 * Bytes in words.
 *
 * @example sizeText(1536) // '1.5 KB'
 */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10} ${units[unit]}`;
}

/** A file's name made safe to show in a line the model reads: no brackets, no line breaks. */
export function shownName(name: string): string {
  return name.replace(/[[\]\p{Cc}\p{Cf}]/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, 100) || 'file';
}

