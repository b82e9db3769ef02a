/**
 * Discord markdown needs no conversion: the agent's markdown is sent as is,
 * with credentials redacted, split into parts Discord accepts.
 */
import { splitMessage } from '../split.js';

/** Longest message content Discord accepts, in characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** Shown instead of an empty text, which Discord rejects. */
export const EMPTY_TEXT = '…';

/** Secrets shorter than this would redact ordinary words. */
const MIN_SECRET_LENGTH = 6;

/**
 * The parts of `text` as Discord messages: redacted, at most 2,000 characters
 * each, cut at paragraph or line boundaries and never inside a code block.
 */
export function renderParts(text: string, secrets: readonly string[]): string[] {
  const clean = redactSecrets(text, secrets);
  if (!clean.trim()) return [EMPTY_TEXT];
  return splitMessage(clean, DISCORD_MESSAGE_LIMIT);
}

/** `text` with every configured secret replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return secrets
    .filter((secret) => secret.length >= MIN_SECRET_LENGTH)
    .reduce((result, secret) => result.split(secret).join('[redacted]'), text);
}
