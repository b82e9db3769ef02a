/**
 * Connecting to a networked store (Redis, Postgres) within a time limit. Their
 * clients retry or wait forever by default, so an unreachable server (or a
 * firewall that drops packets) would hang the start with no word; here the
 * start fails with the address (without its password) and the last reason seen.
 */
import { StoreError } from '../errors.js';
import { withoutPassword } from './url.js';

/** What emits a client's errors (an EventEmitter or keyv's own emitter). */
export interface ErrorSource {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  off(event: 'error', listener: (error: unknown) => void): unknown;
}

/** How to reach a store adapter and how to give up on it. */
export interface Connection {
  /** The adapter; its `error` events are the reasons shown when the time runs out. */
  adapter: ErrorSource;
  /** Resolves once the server answered. */
  ready(): Promise<unknown>;
  /** Drops the connection attempt (best effort, not awaited). */
  close(): Promise<unknown>;
}

/** Limits of {@link connectWithin}. */
export interface ConnectLimits {
  timeoutMs: number;
  /** Stops waiting at once (a shutdown signal during the start). */
  signal?: AbortSignal;
}

/**
 * Waits for `connection.ready()`, at most `timeoutMs`.
 *
 * @throws StoreError when the server refused, failed or did not answer in time
 * @throws the signal's reason when `signal` fired first
 */
export async function connectWithin(url: string, connection: Connection, limits: ConnectLimits): Promise<void> {
  let lastError: unknown;
  // Without a listener an `error` event would crash the process.
  const onError = (error: unknown) => (lastError = error);
  connection.adapter.on('error', onError);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(failure(url, ` within ${seconds(limits.timeoutMs)}`, lastError)), limits.timeoutMs);
    onAbort = () => reject(limits.signal?.reason ?? new Error('aborted'));
    if (limits.signal?.aborted) onAbort();
    limits.signal?.addEventListener('abort', onAbort, { once: true });
  });
  const ready = connection.ready().catch((error: unknown) => {
    throw failure(url, '', lastError ?? error);
  });
  try {
    await Promise.race([ready, gaveUp]);
    connection.adapter.off('error', onError);
  } catch (error) {
    // The listener stays: the abandoned client may still report errors while it closes.
    ready.catch(() => undefined);
    connection.close().catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
    if (onAbort) limits.signal?.removeEventListener('abort', onAbort);
  }
}

/** `could not connect to the store at redis://host:1 within 10 s (connect ECONNREFUSED ...); check ...` */
function failure(url: string, within: string, cause: unknown): StoreError {
  const shown = withoutPassword(url);
  const reason = cause ? ` (${withoutPassword(reasonOf(cause))})` : '';
  const message = `could not connect to the store at ${shown}${within}${reason}; check PINCER_STORE_URL (storeUrl) and that the server is running`;
  return new StoreError(shown, message, { cause });
}

/** The most telling part of a client error: its code, or its message. */
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length) return reasonOf(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message || code || error.name;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
