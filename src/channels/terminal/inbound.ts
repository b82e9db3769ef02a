/**
 * What a line typed at the terminal means: a message, a `/command`, an answer
 * to the pending prompt, or nothing.
 */
import { ACTION_VIEWS, actionOfKey } from '../approval-payload.js';
import type { PromptAction } from '../types.js';

/** The meaning of one typed line. */
export type TypedLine =
  | { kind: 'empty' }
  | { kind: 'message'; text: string }
  | { kind: 'command'; name: string; args: string }
  | { kind: 'answer'; action: PromptAction }
  /** The letter of a choice the pending prompt does not offer (`a` where Always allow is not offered). */
  | { kind: 'not-offered'; action: PromptAction }
  /** One word at a prompt that is not one of its choices (`yy`, `nope`): a typo, asked again. */
  | { kind: 'retry'; text: string };

/** Whole words that answer too, besides each action's letter. */
const WORDS: Record<string, PromptAction> = {
  yes: 'approve',
  no: 'deny',
  always: 'always',
  continue: 'continue',
  stop: 'stop',
  try: 'redirect',
};

// A name right after the slash, then spaces or the end: `/etc/hosts is odd` stays a message.
const COMMAND = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/;

/**
 * Interprets `line`. `pending` is the prompt the next answer goes to; without
 * one, `y` or `yes` is an ordinary message. While one waits, any other single
 * word (`yy`, `nope`, a letter of another prompt's choices) is asked again,
 * and a sentence is a message.
 *
 * @example interpretLine('/policy list', undefined) // { kind: 'command', name: 'policy', args: 'list' }
 */
export function interpretLine(line: string, pending: { actions: readonly PromptAction[] } | undefined): TypedLine {
  const text = line.trim();
  if (!text) return { kind: 'empty' };
  const word = text.toLowerCase();
  const action = pending ? (actionOfKey(word) ?? WORDS[word]) : undefined;
  if (action && pending?.actions.includes(action)) return { kind: 'answer', action };
  if (action === 'always' && pending?.actions.includes('approve')) return { kind: 'not-offered', action };
  const command = COMMAND.exec(text);
  if (command) return { kind: 'command', name: command[1]!.toLowerCase(), args: (command[2] ?? '').trim() };
  // A sentence at the prompt is the person moving on (the agent reads it as a denial); one word is a slip.
  if (pending && !/\s/.test(text)) return { kind: 'retry', text };
  return { kind: 'message', text };
}

/** The order choices are asked in at the terminal: the usual answer first. */
const QUESTION_ORDER: PromptAction[] = ['approve', 'deny', 'always', 'continue', 'stop', 'redirect'];

/**
 * The question under a prompt, each choice with its letter in brackets.
 *
 * @example promptQuestion(['approve', 'always', 'deny']) // 'Approve? [y]es / [n]o / [a]lways: '
 */
export function promptQuestion(actions: readonly PromptAction[]): string {
  const choices = QUESTION_ORDER.filter((action) => actions.includes(action)).map(choiceWord);
  return `${actions.includes('approve') ? 'Approve?' : 'Your choice?'} ${choices.join(' / ')}: `;
}

/**
 * The letters of the offered choices, for a hint.
 *
 * @example offeredKeys(['approve', 'deny']) // 'y or n'
 */
export function offeredKeys(actions: readonly PromptAction[]): string {
  const keys = QUESTION_ORDER.filter((action) => actions.includes(action)).map((action) => ACTION_VIEWS[action].key);
  return keys.length > 1 ? `${keys.slice(0, -1).join(', ')} or ${keys[keys.length - 1]}` : (keys[0] ?? '');
}

/** How each choice reads in the question; each begins with its letter. */
const QUESTION_WORDS: Record<PromptAction, string> = {
  approve: 'yes',
  deny: 'no',
  always: 'always',
  continue: 'continue',
  stop: 'stop',
  redirect: 'try another way',
};

function choiceWord(action: PromptAction): string {
  const word = QUESTION_WORDS[action];
  return `[${word[0]}]${word.slice(1)}`;
}
