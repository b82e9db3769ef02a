/**
 * Retrying model calls: exponential backoff with full jitter, a server's
 * `Retry-After` honoured, every wait abortable. Only errors marked `retryable`
 * are tried again.
 */
import { LlmError } from '../errors.js';
import { retryAfterMs } from './errors.js';

/** How many times to retry and how long to wait in between. */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 means a single attempt. */
  maxRetries: number;
  /** Backoff before the first retry, doubled for each further one. */
  baseDelayMs: number;
  /** Upper bound of any wait, including one a server asks for. */
  maxDelayMs: number;
}

/** Told about each retry before its wait starts, for logging. */
export interface RetryNotice {
  /** The retry about to happen, from 1. */
  retry: number;
  maxRetries: number;
  delayMs: number;
  error: LlmError;
}

/** Options of {@link withRetries}. */
export interface RetryOptions extends RetryPolicy {
  signal?: AbortSignal;
  onRetry?: (notice: RetryNotice) => void;
  /** Extra veto, e.g. once streamed text has reached the user. */
  canRetry?: (error: LlmError) => boolean;
  /** Source of jitter in [0, 1); replaced in tests for exact delays. */
  random?: () => number;
}

/**
 * Runs `attempt` until it succeeds, fails with an error that is not retryable,
 * or runs out of retries. `attempt` receives the attempt number from 0 and must
 * throw LlmError (anything else is rethrown as is).
 */
export async function withRetries<T>(attempt: (index: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let index = 0; ; index += 1) {
    try {
      return await attempt(index);
    } catch (error) {
      const delayMs = nextDelay(error, index, options);
      if (delayMs === undefined) throw error;
      options.onRetry?.({ retry: index + 1, maxRetries: options.maxRetries, delayMs, error: error as LlmError });
      await sleep(delayMs, options.signal);
    }
  }
}

/** The wait before the next attempt, or undefined when the error should be thrown. */
function nextDelay(error: unknown, index: number, options: RetryOptions): number | undefined {
  if (!(error instanceof LlmError) || !error.retryable) return undefined;
  if (index >= options.maxRetries) return undefined;
  if (options.canRetry && !options.canRetry(error)) return undefined;
  const asked = retryAfterMs(error);
  if (asked === undefined) return backoffDelay(index, options, options.random);
  // A server asking for longer than we are willing to wait gets its error
  // reported now rather than a request it has told us it will refuse.
  return asked <= options.maxDelayMs ? asked : undefined;
}

/**
 * Full-jitter backoff: a uniform wait between 0 and min(cap, base * 2^index),
 * so that many clients failing together do not retry together.
 */
export function backoffDelay(index: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** index);
  return Math.floor(random() * ceiling);
}

/** Waits `ms`, or rejects with an `aborted` LlmError as soon as the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortedError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortedError(signal?: AbortSignal): LlmError {
  return new LlmError('LLM request aborted', 'aborted', false, undefined, { cause: signal?.reason });
}
