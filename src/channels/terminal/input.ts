/**
 * What a line typed at the terminal means: a message, a `/command`, an answer
 * to the pending approval prompt, or nothing.
 */
import type { ApprovalAction } from '../types.js';

/** The meaning of one typed line. */
export type TypedLine =
  | { kind: 'empty' }
  | { kind: 'message'; text: string }
  | { kind: 'command'; name: string; args: string }
  | { kind: 'answer'; action: ApprovalAction }
  /** `a` / `always` typed while the pending prompt does not offer it. */
  | { kind: 'always-not-offered' };

const ANSWERS: Record<string, ApprovalAction> = {
  y: 'approve',
  yes: 'approve',
  n: 'deny',
  no: 'deny',
  a: 'always',
  always: 'always',
};

// A name right after the slash, then spaces or the end: `/etc/hosts is odd` stays a message.
const COMMAND = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/;

/**
 * Interprets `line`. `pending` is the approval prompt the next answer goes to;
 * without one, `y` or `yes` is an ordinary message.
 *
 * @example interpretLine('/policy list', undefined) // { kind: 'command', name: 'policy', args: 'list' }
 */
export function interpretLine(line: string, pending: { allowAlways: boolean } | undefined): TypedLine {
  const text = line.trim();
  if (!text) return { kind: 'empty' };
  const action = pending ? ANSWERS[text.toLowerCase()] : undefined;
  if (action === 'always' && !pending?.allowAlways) return { kind: 'always-not-offered' };
  if (action) return { kind: 'answer', action };
  const command = COMMAND.exec(text);
  if (command) return { kind: 'command', name: command[1]!.toLowerCase(), args: (command[2] ?? '').trim() };
  return { kind: 'message', text };
}
