/**
 * API transformers for transient failures that @grammyjs/auto-retry leaves to
 * us: network errors get a bounded number of retries (auto-retry's own loop
 * would retry them forever), and every call is bound to the channel's lifetime
 * so that `stop()` cuts short any request or retry pause still running.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpError, type Transformer } from 'grammy';
import { grammySignal } from './signal.js';

/** Settings of {@link networkRetry}. */
export interface NetworkRetryOptions {
  /** Retries after the first failure. */
  attempts: number;
  /** First pause; doubles each retry. */
  delayMs: number;
  /** Aborted when the channel stops; no retry starts after that. */
  lifetime: AbortSignal;
  /** Told of each network failure (to say why the Bot API cannot be reached). */
  onFailure?: (error: HttpError) => void;
  /**
   * Methods whose network failures are passed on, not retried: the caller
   * first looks for what the failed call may have done (a posted message).
   */
  passedOn?: ReadonlySet<string>;
}

/**
 * Retries a call whose request failed on the network (refused, reset, timed
 * out), with exponential backoff, so that nothing is lost to a short outage;
 * an aborted call is never retried. A call may have taken effect before its
 * answer was lost: posts (`passedOn`) are left to their caller, which looks
 * for the message before sending it again.
 */
export function networkRetry(options: NetworkRetryOptions): Transformer {
  return async (prev, method, payload, signal) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await prev(method, payload, signal);
      } catch (error) {
        const aborted = signal?.aborted || options.lifetime.aborted;
        if (error instanceof HttpError && !aborted) options.onFailure?.(error);
        if (!(error instanceof HttpError) || aborted || attempt >= options.attempts || options.passedOn?.has(method)) throw error;
        await networkPause(options, attempt, error);
      }
    }
  };
}

/** Waits before retry `attempt + 1` (exponential backoff), or rethrows `error` at once when the channel stops meanwhile. */
export async function networkPause(options: Pick<NetworkRetryOptions, 'delayMs' | 'lifetime'>, attempt: number, error: unknown): Promise<void> {
  try {
    await sleep(options.delayMs * 2 ** attempt, undefined, { signal: options.lifetime });
  } catch {
    throw error;
  }
}

/** Passes the channel's lifetime signal with every call (combined with the call's own). */
export function bindToLifetime(lifetime: AbortSignal): Transformer {
  return async (prev, method, payload, signal) => {
    if (!signal) return prev(method, payload, grammySignal(lifetime));
    const own = signal as unknown as AbortSignal;
    const combined = new AbortController();
    const abort = () => combined.abort();
    if (own.aborted || lifetime.aborted) abort();
    // Listeners are removed after each call: the lifetime signal outlives millions of calls.
    own.addEventListener('abort', abort);
    lifetime.addEventListener('abort', abort);
    try {
      return await prev(method, payload, grammySignal(combined.signal));
    } finally {
      own.removeEventListener('abort', abort);
      lifetime.removeEventListener('abort', abort);
    }
  };
}

/** Why a request failed on the network, in a few words: the system error code, else the message. */
export function networkReason(error: HttpError): string {
  const cause = error.error as { code?: unknown; message?: unknown } | undefined;
  if (typeof cause?.code === 'string') return cause.code === 'ECONNREFUSED' ? 'connection refused (ECONNREFUSED)' : cause.code;
  return typeof cause?.message === 'string' ? cause.message : error.message;
}
