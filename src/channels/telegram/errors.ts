/**
 * Telegram failures as pincer sees them. grammY puts the bot token in request
 * URLs and a network error's cause can quote that URL: the logger and the
 * start-up messages redact the configured token wherever it appears.
 */
import { GrammyError, HttpError } from 'grammy';
import { ChannelError } from '../../errors.js';

const CHANNEL = 'telegram';

/** A readable description of a failed call. */
export function describeError(error: unknown): string {
  if (error instanceof GrammyError) return `${error.method}: ${error.error_code} ${error.description}`;
  if (error instanceof HttpError) return `${error.message} ${causeMessage(error.error)}`.trim();
  if (error instanceof Error) return error.message;
  return String(error);
}

function causeMessage(cause: unknown): string {
  return cause instanceof Error ? `(${cause.message})` : '';
}

/** The ChannelError for a call that failed after the retries. */
export function toChannelError(error: unknown, what: string): ChannelError {
  if (error instanceof ChannelError) return error;
  return new ChannelError(CHANNEL, `${what} failed: ${describeError(error)}`, isRetryable(error), { cause: error });
}

/** grammY's error behind a {@link toChannelError}, or the error itself. */
function grammyCause(error: unknown): unknown {
  return error instanceof ChannelError ? error.cause : error;
}

/** Telegram answered the call with a refusal (not a network failure or a server error, after which it may have gone through). */
export function isRefusal(error: unknown): boolean {
  const cause = grammyCause(error);
  return cause instanceof GrammyError && cause.error_code < 500;
}

/** The call failed on the network: Telegram's answer never came. */
export function isNetworkFailure(error: unknown): boolean {
  return grammyCause(error) instanceof HttpError;
}

/** Connection failures that happen before a request is sent: the call cannot have taken effect. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** A network failure after which the call may have taken effect all the same (its answer was lost). */
export function mayHaveTakenEffect(error: unknown): boolean {
  const cause = grammyCause(error);
  if (!(cause instanceof HttpError)) return false;
  const code = (cause.error as { code?: unknown } | undefined)?.code;
  return typeof code !== 'string' || !NEVER_SENT.has(code);
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

/** No message has that id in the chat (none yet, or it was deleted). */
export function isAbsentMessage(error: unknown): boolean {
  return error instanceof GrammyError && /message to edit not found/i.test(error.description);
}

/** The bot token was rejected; nothing will work until it is fixed. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 401;
}
