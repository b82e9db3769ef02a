/**
 * Whether a job's model says the goal is reached. The job's system prompt asks
 * for a final report that begins with `DONE:` (or `FAILED:` when it cannot be
 * reached); plain sentences count too ("the task is complete", "I have
 * finished"), unless they are negated ("not done yet", "isn't finished",
 * "before it is complete") or still ahead ("once I am done").
 */

/** What a job's text reply means. */
export type CompletionSignal = { kind: 'done'; report: string } | { kind: 'failed'; reason: string } | { kind: 'continue' };

const DONE_MARK = /^\s*(?:\*\*)?DONE(?:\*\*)?\s*[:.-]\s*/i;
const FAILED_MARK = /^\s*(?:\*\*)?(?:FAILED|CANNOT COMPLETE)(?:\*\*)?\s*[:.-]\s*/i;

/** Sentences that report the goal reached. */
const DONE_PHRASES = [
  /\b(?:task|job|goal|work)\s+(?:is|has been)\s+(?:now\s+)?(?:complete|completed|done|finished|achieved|accomplished)\b/i,
  /\bi(?:'ve| have)\s+(?:now\s+)?(?:completed|finished|accomplished|achieved)\s+(?:the|this|your)\s+(?:task|job|goal|work)\b/i,
  /\b(?:all|everything)\s+(?:is\s+)?(?:done|complete|finished)\b/i,
  /\b(?:task|job|goal)\s+complete\b/i,
];

/** Words that, shortly before a done phrase, turn it around. */
const NEGATION = /\b(?:not|isn't|isnt|aren't|hasn't|haven't|won't|will|would|should|could|going to|never|no longer|yet to|until|before|once|when|if|almost|nearly|partially|partly)\b[^.!?\n]{0,40}$/i;
/** Words right after a done phrase that put it in the future ("complete once I have ..."). */
const CONDITION_AFTER = /^[^.!?\n]{0,15}\b(?:once|when|after|as soon as|if|until)\b/i;
const STILL_TO_DO = /\b(?:not (?:yet )?(?:done|complete|completed|finished)|still (?:need|have|working|to do|remaining)|remaining steps?|next,? i will|i will now|let me (?:now )?(?:continue|proceed))\b/i;

/** Reads a job's text reply. */
export function completionSignal(text: string): CompletionSignal {
  if (FAILED_MARK.test(text)) return { kind: 'failed', reason: text.replace(FAILED_MARK, '').trim() || 'the job said it cannot complete' };
  if (DONE_MARK.test(text)) return { kind: 'done', report: text.replace(DONE_MARK, '').trim() || 'Done.' };
  if (STILL_TO_DO.test(text)) return { kind: 'continue' };
  for (const phrase of DONE_PHRASES) {
    const found = phrase.exec(text);
    if (!found) continue;
    const before = text.slice(Math.max(0, found.index - 60), found.index);
    const after = text.slice(found.index + found[0].length);
    if (NEGATION.test(before) || CONDITION_AFTER.test(after)) continue;
    return { kind: 'done', report: text.trim() };
  }
  return { kind: 'continue' };
}
