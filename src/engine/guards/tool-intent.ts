/**
 * Detecting a reply that announces a tool action ("Let me search for that")
 * without making the call. The loop answers such a reply with
 * {@link TOOL_INTENT_NUDGE} instead of showing the user a promise that nothing
 * will keep.
 *
 * Only the places where a model announces its next step are read: the last two
 * sentences, and the first sentence when little follows it. Code, quotations,
 * questions, offers ("if you like, I'll search") and conversational phrases
 * ("let me explain", "let me know") do not count.
 */
import { stripReasoning } from '../../llm/clean-output.js';
import { matchesOf } from '../../llm/matches.js';
import { withoutCode } from '../../llm/text-spans.js';

/** Added as a user message when a reply announced a tool call but made none. */
export const TOOL_INTENT_NUDGE =
  'You said you would use a tool, but your reply contained no tool call, so nothing was run. ' +
  'If a tool is needed, call it now with a structured tool call instead of describing it in text. ' +
  'If no tool is needed, answer the user directly.';

/** Text after the first sentence that already makes the reply an answer, not an announcement. */
const SUBSTANTIAL_ANSWER_CHARS = 200;

/** Who announces: the model about itself, now or next. */
const SUBJECT =
  "(?:let me|let's|let us|lemme|allow me to|i'll|i will|i'm going to|i am going to|i'm gonna|i'm about to|i am about to|" +
  "i need to|i'll need to|i will need to|i have to|i'll have to|i must|while i)";

/** Words allowed between the subject and the verb. */
const FILLER = "(?:\\s+(?:just|quickly|now|first|then|also|actually|briefly|immediately|go ahead and|try to|try and|attempt to|start by|begin by))*";

/** Actions a tool performs; ambiguous verbs only with an object that makes them actions. */
const ACTION = [
  'search',
  'look (?:it |that |this |them |those )?(?:up|into|for|at)',
  'check',
  'double[- ]check',
  'verify',
  'fetch',
  'retrieve',
  'grab',
  '(?:pull|bring) (?:up|down)',
  'find',
  'browse',
  'open',
  'read',
  'run',
  'execute',
  'call',
  'invoke',
  'query',
  'download',
  'load',
  'scan',
  'inspect',
  'investigate',
  'explore',
  'examine',
  'research',
  'dig (?:into|through|up)',
  'consult',
  'crawl',
  'scrape',
  'ping',
  'visit',
  'navigate',
  'access',
  'google',
  'calculate',
  'compute',
  'install',
  'test',
  'save',
  'edit',
  'modify',
  'update(?! you)',
  'delete',
  'remove',
  'send',
  'post',
  'do (?:a |an )?(?:quick |brief |web )?(?:search|lookup|look-up|check)',
  'get (?!back|started|this straight|you started|it right)(?:the|that|this|those|some|more|you)\\b',
  'see (?:what|if|whether) (?:i can|there)',
  'list (?:the |all )?(?:files|folders|directories|directory|contents)',
  'create (?:a |an |the |that |this )?(?:new )?(?:file|folder|directory|issue|ticket|reminder|event|branch|note|task)',
  'write (?:(?:it|this|that|them|the \\w+|a \\w+) )?(?:to|into)\\b',
  'write (?:the|a|that|this) file',
  'use (?:the |my |a |an )?[\\w-]+(?: [\\w-]+)? (?:tool|function|command|api|browser)',
].join('|');

const ANNOUNCEMENT = new RegExp(`\\b${SUBJECT}${FILLER}\\s+(?:${ACTION})\\b`, 'g');

/** "I'm searching for it now", "I am checking the file". */
const PROGRESSIVE =
  /\b(?:i'm|i am)\s+(?:now\s+|currently\s+|just\s+)?(?:searching|looking (?:up|into|for)|checking|fetching|retrieving|pulling up|running|executing|calling|querying|downloading|opening|scanning|browsing|inspecting|investigating|grabbing)\b/g;

/** The patterns that find an announcement in a sentence (bench/patterns times how they are run). */
export const TOOL_INTENT_PATTERNS: readonly RegExp[] = [ANNOUNCEMENT, PROGRESSIVE];

/** Before the announcement: it is conditional or somebody else's. */
const CONDITIONAL_BEFORE = /\b(?:if|unless|once you|when you|would you|do you want|want me to|shall i|should i)\b/;

/** After it: an offer, not a plan. */
const OFFER_AFTER = /\bif (?:you(?:'d| would)? (?:like|want|prefer|wish)|needed|necessary|that helps)\b/;

/**
 * True when `text` announces a tool action it did not take.
 *
 * @example
 * signalsToolIntent('Let me search for that.') // true
 * signalsToolIntent('Let me explain how search works: ...') // false
 */
export function signalsToolIntent(text: string): boolean {
  const sentences = sentencesOf(proseOf(text));
  if (sentences.length === 0) return false;
  if (sentences.slice(-2).some(announces)) return true;
  const rest = sentences.slice(1).join(' ');
  return rest.length < SUBSTANTIAL_ANSWER_CHARS && announces(sentences[0]!);
}

/** The reply without reasoning, code, quotations or block quotes, apostrophes made plain. */
function proseOf(text: string): string {
  return withoutCode(stripReasoning(text))
    .replace(/[\u2018\u2019\u02BC]/g, "'")
    .replace(/^\s*>.*$/gm, ' ')
    .replace(/"[^"\n]*"|\u201C[^\u201D\n]*\u201D|\u00AB[^\u00BB\n]*\u00BB/g, ' ')
    .replace(/(^|[\s([{:,])'[^'\n]+'(?=$|[\s.,;:!?)\]}])/g, '$1 ');
}

function sentencesOf(prose: string): string[] {
  return prose
    .split(/(?<=[.!?\u2026])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => /[a-z]/i.test(sentence));
}

/** Whether one sentence announces an action. */
function announces(sentence: string): boolean {
  const lower = sentence.toLowerCase();
  if (lower.endsWith('?')) return false;
  const matches = [...matchesOf(ANNOUNCEMENT, lower), ...matchesOf(PROGRESSIVE, lower)];
  return matches.some((match) => isPlainAnnouncement(lower, match.index, match.index + match[0].length));
}

function isPlainAnnouncement(sentence: string, start: number, end: number): boolean {
  if (CONDITIONAL_BEFORE.test(sentence.slice(0, start))) return false;
  const after = sentence.slice(end);
  if (OFFER_AFTER.test(after)) return false;
  // "Let me calculate: 3 x 4 = 12." did the work in the same breath.
  const colon = after.indexOf(':');
  return colon < 0 || after.slice(colon + 1).trim().length < 3;
}
