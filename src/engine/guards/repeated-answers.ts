/**
 * The same answer again and again: a run that goes on after a text reply (a
 * background job's, until it reports the goal reached) whose model keeps
 * replying the same words without doing anything. Answers compare equal with
 * case and whitespace evened out; the count itself is a
 * {@link RepeatedBatchTracker}'s, and a tool call or a new message in between
 * ends the streak (the work moved on).
 */
import { clip } from './observed-call.js';

/** The comparable form of an answer: lower case, whitespace as one space. */
export function answerKey(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * What repeated, for the report: `the same answer 3 times in a row without
 * finishing ("Working on it.")`.
 */
export function repeatedAnswerSummary(text: string, times: number): string {
  return `the same answer ${times} times in a row without finishing ("${clip(text, 80)}").`;
}
