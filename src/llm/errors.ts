/**
 * Turns whatever the openai SDK (or a broken stream) throws into an {@link LlmError}
 * whose `kind` tells the agent how to react and whose `retryable` tells the retry
 * loop whether another attempt may help.
 */
import type { APIConnectionError, APIError } from 'openai';
import { LlmError } from '../errors.js';
import { loadedSdk } from './sdk.js';

/** What the provider knows about how an attempt ended, beyond the thrown error. */
export interface AttemptOutcome {
  /** The caller's AbortSignal fired. */
  aborted: boolean;
  /** The per-attempt deadline passed. */
  timedOut: boolean;
  timeoutMs: number;
  /** The URL the request went to, without credentials, for errors that depend on it (404). */
  endpoint?: string;
}

/**
 * Messages that OpenAI, vLLM, llama.cpp, Ollama and OpenRouter use when the prompt
 * does not fit; some servers send no `code`, only prose.
 */
const CONTEXT_LENGTH_PATTERN =
  /context[_ ]length|maximum context|context window|context size|too many tokens|prompt is too long|reduce the length/i;

/** Maps any failure of one attempt to an LlmError. */
export function toLlmError(error: unknown, outcome: AttemptOutcome): LlmError {
  if (error instanceof LlmError) return error;
  // Our own signals are checked first: the SDK reports both as a plain abort.
  if (outcome.aborted) return new LlmError('LLM request aborted', 'aborted', false, undefined, { cause: error });
  // Before the SDK has loaded, nothing thrown can be one of its errors.
  const sdk = loadedSdk();
  if (outcome.timedOut || (sdk && error instanceof sdk.APIConnectionTimeoutError)) {
    return new LlmError(`LLM request timed out after ${outcome.timeoutMs} ms`, 'timeout', true, undefined, { cause: error });
  }
  if (sdk && error instanceof sdk.APIUserAbortError) return new LlmError('LLM request aborted', 'aborted', false, undefined, { cause: error });
  if (sdk && error instanceof sdk.APIConnectionError) {
    return new LlmError(`could not reach the LLM endpoint: ${describeCause(error)}`, 'connection', true, undefined, { cause: error });
  }
  if (sdk && error instanceof sdk.APIError) return fromApiError(error, outcome.endpoint);
  if (isStreamBreak(error)) {
    return new LlmError(`the LLM response stream broke: ${messageOf(error)}`, 'connection', true, undefined, { cause: error });
  }
  return new LlmError(`LLM request failed: ${messageOf(error)}`, 'other', false, undefined, { cause: error });
}

function fromApiError(error: APIError, endpoint: string | undefined): LlmError {
  const status = error.status;
  const detail = upstreamMessage(error);
  const options = { cause: error };
  if (status === undefined) {
    // An error event inside a stream: the server gave up mid-answer, usually overload.
    return new LlmError(`the LLM server reported an error: ${detail}`, 'server', true, undefined, options);
  }
  if (isContextLength(error)) {
    return new LlmError(`the conversation is too long for the model: ${detail}`, 'context_length', false, status, options);
  }
  if (status === 401 || status === 403) {
    return new LlmError(`the LLM endpoint refused the credentials (${status}): ${detail}`, 'auth', false, status, options);
  }
  if (status === 429) {
    // An exhausted quota is reported as 429 too, but waiting does not refill it.
    const retryable = error.code !== 'insufficient_quota';
    return new LlmError(`the LLM endpoint is rate limiting requests (429): ${detail}`, 'rate_limit', retryable, status, options);
  }
  if (status === 404) return notFound(error, detail, endpoint);
  if (status === 408) return new LlmError(`the LLM endpoint timed out (408): ${detail}`, 'timeout', true, status, options);
  if (status >= 500) return new LlmError(`the LLM server failed (${status}): ${detail}`, 'server', true, status, options);
  return new LlmError(`the LLM endpoint rejected the request (${status}): ${detail}`, 'bad_request', false, status, options);
}

/**
 * A 404 is either a model the server does not have (OpenAI, Ollama say so) or,
 * far more often, a base URL missing its `/v1`, so that no chat completions
 * live where the request went.
 */
function notFound(error: APIError, detail: string, endpoint: string | undefined): LlmError {
  const options = { cause: error };
  if (error.code === 'model_not_found' || /\bmodel\b.*(not found|does not exist)/i.test(detail)) {
    return new LlmError(`the LLM endpoint does not have the model (404): ${detail}; check PINCER_MODEL (llm.model)`, 'bad_request', false, 404, options);
  }
  const where = endpoint ? ` at ${endpoint}` : '';
  return new LlmError(
    `the LLM endpoint has no chat completions${where} (404: ${detail}); check that the base URL (OPENAI_BASE_URL, llm.baseUrl) ends in /v1, e.g. http://127.0.0.1:11434/v1`,
    'bad_request',
    false,
    404,
    options,
  );
}

function isContextLength(error: APIError): boolean {
  if (error.code === 'context_length_exceeded' || error.code === 'exceed_context_size_error') return true;
  if (error.status === 413) return true;
  return (error.status === 400 || error.status === 422) && CONTEXT_LENGTH_PATTERN.test(upstreamMessage(error));
}

/** The server's own explanation, without the SDK's status prefix. */
function upstreamMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | string | undefined;
  if (typeof body === 'string' && body) return body;
  if (body && typeof body === 'object' && typeof body.message === 'string' && body.message) return body.message;
  if (body && typeof body === 'object') return JSON.stringify(body);
  return error.message.replace(/^\d{3}\s+/, '') || 'no details given';
}

function describeCause(error: APIConnectionError): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const inner = cause && typeof cause === 'object' ? (cause as { cause?: { code?: unknown } }).cause : undefined;
  const code = inner?.code ?? cause?.code;
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

/** undici reports a connection dropped mid-body as a TypeError "terminated". */
function isStreamBreak(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'TypeError' && /terminated|other side closed|socket/i.test(error.message);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * How long the server asked us to wait before retrying, from `retry-after-ms`
 * or `Retry-After` (seconds or an HTTP date). Undefined when it did not say.
 */
export function retryAfterMs(error: LlmError, now = Date.now()): number | undefined {
  const cause = error.cause;
  const sdk = loadedSdk();
  if (!sdk || !(cause instanceof sdk.APIError) || !cause.headers) return undefined;
  return parseRetryAfter(cause.headers, now);
}

/** Reads the retry hint of a response's headers; see {@link retryAfterMs}. */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | undefined {
  const millis = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(millis) && millis >= 0) return millis;
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw.trim());
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
