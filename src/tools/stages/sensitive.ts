/**
 * Keeping sensitive argument values (a password, a token) out of everything but
 * the tool itself: approval prompts, hooks, logs and audit records see the
 * redaction marker; the value is put back when a hook rewrites the arguments.
 */
import { REDACTED, type Redactor } from '../../safety/secrets.js';
import type { Params } from './normalize.js';

const REDACTION_MARGIN = 512;

/** The arguments with each named sensitive value replaced by `[redacted]`. */
export function redactParams(params: Params, sensitive: readonly string[] | undefined): Params {
  if (!sensitive?.length) return params;
  const out: Params = { ...params };
  for (const key of sensitive) if (Object.hasOwn(out, key)) out[key] = REDACTED;
  return out;
}

/**
 * After a hook rewrote redacted arguments: every sensitive value that is still
 * the redaction marker gets its original value back.
 */
export function restoreSensitive(original: Params, rewritten: Params, sensitive: readonly string[] | undefined): Params {
  if (!sensitive?.length) return rewritten;
  const out: Params = { ...rewritten };
  for (const key of sensitive) {
    if (out[key] === REDACTED && Object.hasOwn(original, key)) out[key] = original[key];
  }
  return out;
}

/** JSON of a value for people and logs: redacted, bounded, never throwing on deep or odd values. */
export function displayJson(value: unknown, redactor: Redactor, maxChars: number, pretty = true): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, pretty ? 2 : undefined) ?? 'null';
  } catch {
    return '[arguments too deeply nested to show]';
  }
  // Redact a window a little wider than what is shown, so a secret at the cut is still recognised.
  const window = redactor.redact(text.slice(0, maxChars + REDACTION_MARGIN));
  if (text.length <= maxChars + REDACTION_MARGIN && window.length <= maxChars) return window;
  return `${window.slice(0, maxChars)}… (${Math.max(1, text.length - maxChars)} more characters)`;
}

/** The text cut to `maxChars` with a note of how much was left out. */
export function boundText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… (${text.length - maxChars} more characters)`;
}
