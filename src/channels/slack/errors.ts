/**
 * Slack failures as pincer sees them: a ChannelError that says which call
 * failed and whether trying later may help. `@slack/web-api` has already
 * waited out 429s (Retry-After) and retried 5xx and connection errors with the
 * adapter's retry policy by the time an error reaches here.
 */
import { webApi } from '@slack/bolt';
import { ChannelError } from '../../errors.js';

/** Platform errors that a later attempt may not hit. */
const TRANSIENT_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

/** The ChannelError for a Web API call (`chat.postMessage`, ...) that failed after the retries. */
export function toChannelError(error: unknown, method: string): ChannelError {
  if (error instanceof ChannelError) return error;
  const coded = error as { code?: string; data?: { error?: string }; message?: string };
  if (coded.code === webApi.ErrorCode.PlatformError) {
    const code = coded.data?.error ?? 'unknown_error';
    return new ChannelError('slack', `${method} failed: ${code}`, TRANSIENT_ERRORS.has(code), { cause: error });
  }
  const detail = coded.message ?? String(error);
  return new ChannelError('slack', `${method} failed: ${detail}`, true, { cause: error });
}
