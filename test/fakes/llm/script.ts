/**
 * What the fake OpenAI-compatible server answers: script entries, consumed in
 * order, and helpers that build the common ones with realistic bodies.
 */

/** A tool call the fake model makes; `arguments` as an object or as raw text (e.g. cut off). */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

/** Token counts reported in the `usage` block. */
export interface FakeUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
}

/** Options every entry accepts. */
interface EntryTiming {
  /** Wait this long before answering (headers included). */
  latencyMs?: number;
}

/** A completion: text, tool calls or both. Served as JSON or as SSE, as the request asks. */
export interface FakeCompletion extends EntryTiming {
  type?: 'completion';
  content?: string | null;
  toolCalls?: FakeToolCall[];
  /** Defaults to `tool_calls` when there are calls, else `stop`. */
  finishReason?: string;
  usage?: FakeUsage;
  /** Reported model name; defaults to the requested one. */
  model?: string;
  /** Characters per streamed text or argument fragment (default 4). */
  chunkSize?: number;
  /** Pause between streamed chunks (default 0: the whole stream in one write). */
  chunkDelayMs?: number;
  /** Streaming only: cut the connection after this many chunks, as a dying server would. */
  dropAfterChunks?: number;
}

/** An HTTP error response. */
export interface FakeHttpError extends EntryTiming {
  type: 'error';
  status: number;
  /** JSON body; defaults to an OpenAI-style `{ error: { message, type, code } }`. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Accept the request and never answer; the client has to give up. */
export interface FakeHang {
  type: 'hang';
}

/** One scripted answer. */
export type FakeLlmEntry = FakeCompletion | FakeHttpError | FakeHang;

/** A text reply. */
export function textReply(content: string, extra: Omit<FakeCompletion, 'type' | 'content'> = {}): FakeCompletion {
  return { ...extra, content };
}

/** A reply that calls tools, optionally with some text beside them. */
export function toolCallReply(calls: FakeToolCall[], extra: Omit<FakeCompletion, 'type' | 'toolCalls'> = {}): FakeCompletion {
  return { content: null, ...extra, toolCalls: calls };
}

/** Tool calls cut off by the token limit: raw, unfinished argument text and `finish_reason: length`. */
export function truncatedToolCallReply(name: string, rawArguments = '{"path": "notes.txt", "content": "Once upon a ti'): FakeCompletion {
  return { content: null, toolCalls: [{ name, arguments: rawArguments }], finishReason: 'length' };
}

/** An error response with OpenAI's body shape. */
export function errorReply(
  status: number,
  error: { message: string; type: string; code?: string | null; param?: string | null },
  headers?: Record<string, string>,
): FakeHttpError {
  return { type: 'error', status, headers, body: { error: { param: null, code: null, ...error } } };
}

/** 429 with `Retry-After` in seconds (omitted when undefined). */
export function rateLimited(retryAfterSeconds?: number): FakeHttpError {
  const headers = retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) };
  return errorReply(429, { message: 'Rate limit reached for requests. Please try again later.', type: 'requests', code: 'rate_limit_exceeded' }, headers);
}

/** 500 as OpenAI sends it. */
export function serverError(status = 500): FakeHttpError {
  return errorReply(status, { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error' });
}

/** 401 for a wrong key. */
export function authError(): FakeHttpError {
  return errorReply(401, { message: 'Incorrect API key provided: sk-fake***1234.', type: 'invalid_request_error', code: 'invalid_api_key' });
}

/** 400 `context_length_exceeded`, the real OpenAI body. */
export function contextLengthError(limit = 8192, used = 9347): FakeHttpError {
  return errorReply(400, {
    message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${used} tokens. Please reduce the length of the messages.`,
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  });
}

/** Never answers. */
export function hang(): FakeHang {
  return { type: 'hang' };
}
