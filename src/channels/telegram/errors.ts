/**
 * Telegram failures as pincer sees them. grammY puts the bot token in request
 * URLs, and a network error's cause can quote that URL, so every description
 * leaving this folder goes through {@link describeError}, which removes it.
 */
import { GrammyError, HttpError } from 'grammy';
import { ChannelError } from '../../errors.js';

const CHANNEL = 'telegram';

/** A readable, token-free description of a failed call. */
export function describeError(error: unknown, token: string): string {
  let text: string;
  if (error instanceof GrammyError) text = `${error.method}: ${error.error_code} ${error.description}`;
  else if (error instanceof HttpError) text = `${error.message} ${causeMessage(error.error)}`.trim();
  else if (error instanceof Error) text = error.message;
  else text = String(error);
  return scrubToken(text, token);
}

function causeMessage(cause: unknown): string {
  return cause instanceof Error ? `(${cause.message})` : '';
}

/** Removes the token (and the `bot<token>` path segment) from `text`. */
export function scrubToken(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}

/** The ChannelError for a call that failed after the retries. */
export function toChannelError(error: unknown, token: string, what: string): ChannelError {
  if (error instanceof ChannelError) return error;
  return new ChannelError(CHANNEL, `${what} failed: ${describeError(error, token)}`, isRetryable(error));
}

/** Whether trying again later may help (rate limits, server and network errors). */
export function isRetryable(error: unknown): boolean {
  if (error instanceof HttpError) return true;
  return error instanceof GrammyError && (error.error_code === 429 || error.error_code >= 500);
}

/** Telegram could not parse our HTML: the part is resent as plain text. */
export function isParseError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
}

/** An edit that would change nothing; harmless. */
export function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && /message is not modified/i.test(error.description);
}

/** The message to edit is gone (deleted by someone): send a new one instead. */
export function isMissingMessage(error: unknown): boolean {
  return error instanceof GrammyError && /message to edit not found|message can't be edited/i.test(error.description);
}

/** The bot token was rejected; nothing will work until it is fixed. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 401;
}
