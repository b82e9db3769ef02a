/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for tests and benchmarks.
 * It speaks the real Chat Completions wire format (JSON and SSE) so the real
 * openai SDK can be pointed at it; every request body is recorded.
 *
 * @example
 * const llm = await startFakeLlm({ script: [textReply('hello')] });
 * const provider = new OpenAiProvider(LlmConfigSchema.parse({ baseUrl: llm.url, model: 'fake-model' }));
 * await llm.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeCompletion, FakeHttpError, FakeLlmEntry } from './script.js';
import { imagesIn, type FakeImage } from './images.js';
import { completionBody, streamEvents } from './wire.js';
import { FakeTranscriptions } from './transcriptions.js';

/** A chat-completion request body as the fake received it. */
export interface FakeLlmRequest {
  model: string;
  messages: Array<Record<string, unknown> & { role: string }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  [key: string]: unknown;
}

/** Builds the answer to a request when the script queue is empty. `index` counts requests from 0. */
export type FakeResponder = (request: FakeLlmRequest, index: number) => FakeLlmEntry | Promise<FakeLlmEntry>;

/** Options of {@link startFakeLlm}. */
export interface StartFakeLlmOptions {
  /** Answers for the first requests, in order. */
  script?: FakeLlmEntry[];
  /** Answers once the script is used up. Without one, an exhausted script answers 400. */
  responder?: FakeResponder;
  /** Ids listed by GET /v1/models (default `fake-model`); `null`: the server has no model list (404). */
  models?: string[] | null;
  /** When set, a request without `Authorization: Bearer <apiKey>` gets 401. */
  apiKey?: string;
  /**
   * Accept histories a real endpoint refuses (tool calls without results,
   * duplicate tool-call ids). Off by default: the fake is as strict as OpenAI.
   */
  acceptAnyHistory?: boolean;
  /** Keep request bodies and headers (default true); benchmarks turn it off. */
  record?: boolean;
}

/** A running fake. */
export interface FakeLlm {
  /** Base URL for the SDK, ending in `/v1`. */
  readonly url: string;
  /** Every chat-completion body received, in order (when recording). */
  readonly requests: FakeLlmRequest[];
  /** Every image part the recorded requests carried, decoded, in order. */
  readonly images: FakeImage[];
  /** The headers of each recorded request, parallel to `requests`. */
  readonly requestHeaders: IncomingHttpHeaders[];
  /** Chat-completion requests received, recorded or not. */
  readonly served: number;
  /** Script entries not consumed yet. */
  readonly pending: number;
  /** Appends to the script. */
  enqueue(...entries: FakeLlmEntry[]): void;
  /** Replaces the fallback responder. */
  setResponder(responder: FakeResponder | undefined): void;
  /** `POST /v1/audio/transcriptions`: what it received, and what it answers (`set`). */
  readonly transcriptions: FakeTranscriptions;
  /** Stops listening and drops every connection, hanging ones included. */
  close(): Promise<void>;
}

class FakeLlmServer implements FakeLlm {
  url = '';
  readonly requests: FakeLlmRequest[] = [];
  readonly images: FakeImage[] = [];
  readonly requestHeaders: IncomingHttpHeaders[] = [];
  served = 0;
  readonly transcriptions = new FakeTranscriptions();
  private readonly queue: FakeLlmEntry[];
  private responder: FakeResponder | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server: Server;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(private readonly options: StartFakeLlmOptions) {
    this.queue = [...(options.script ?? [])];
    this.responder = options.responder;
    this.server = createServer({ keepAlive: true, noDelay: true }, (req, res) => this.route(req, res));
    // Longer than a client's idle timeout, so a reused connection is never closed under it.
    this.server.keepAliveTimeout = 30_000;
  }

  get pending(): number {
    return this.queue.length;
  }

  enqueue(...entries: FakeLlmEntry[]): void {
    this.queue.push(...entries);
  }

  setResponder(responder: FakeResponder | undefined): void {
    this.responder = responder;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, resolve);
    });
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/v1`;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models' && this.options.models !== null) {
      if (!this.authorised(req)) return sendJson(res, 401, apiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
      return this.listModels(res);
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      if (!this.authorised(req)) return sendJson(res, 401, apiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
      return void this.readBody(req, res).catch(() => res.destroy());
    }
    if (req.method === 'POST' && path === '/v1/audio/transcriptions') {
      if (!this.authorised(req)) return sendJson(res, 401, apiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
      return void this.transcriptions.serve(req, res, (status, body) => sendJson(res, status, body)).catch(() => res.destroy());
    }
    sendJson(res, 404, apiError(`Unknown request URL: ${req.method} ${path}`, 'invalid_request_error', 'unknown_url'));
  }

  private authorised(req: IncomingMessage): boolean {
    return this.options.apiKey === undefined || req.headers.authorization === `Bearer ${this.options.apiKey}`;
  }

  private listModels(res: ServerResponse): void {
    const ids = this.options.models ?? ['fake-model'];
    sendJson(res, 200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: this.created, owned_by: 'fake' })) });
  }

  private async readBody(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    let body: FakeLlmRequest;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as FakeLlmRequest;
    } catch {
      return sendJson(res, 400, apiError('We could not parse the JSON body of your request.', 'invalid_request_error', null));
    }
    const index = this.served++;
    if (this.options.record !== false) {
      this.requests.push(body);
      this.images.push(...imagesIn(body.messages, index));
      this.requestHeaders.push(req.headers);
    }
    const malformed = this.options.acceptAnyHistory ? undefined : historyProblem(body.messages);
    if (malformed) return sendJson(res, 400, apiError(malformed, 'invalid_request_error', null));
    await this.answer(body, index, res);
  }

  private async answer(body: FakeLlmRequest, index: number, res: ServerResponse): Promise<void> {
    let entry: FakeLlmEntry;
    try {
      entry = this.queue.shift() ?? (await this.fallback(body, index));
    } catch (error) {
      return sendJson(res, 500, apiError(`fake responder failed: ${String(error)}`, 'server_error', null));
    }
    if (entry.type === 'hang') return;
    this.after(entry.latencyMs ?? 0, res, () => this.serve(entry, body, index, res));
  }

  private async fallback(body: FakeLlmRequest, index: number): Promise<FakeLlmEntry> {
    if (this.responder) return this.responder(body, index);
    const message = 'fake LLM: the script is used up and no responder is set';
    return { type: 'error', status: 400, body: apiError(message, 'invalid_request_error', 'script_exhausted') };
  }

  private serve(entry: FakeCompletion | FakeHttpError, body: FakeLlmRequest, index: number, res: ServerResponse): void {
    if (entry.type === 'error') {
      const errorBody = entry.body ?? apiError(`fake error ${entry.status}`, 'server_error', null);
      return sendJson(res, entry.status, errorBody, entry.headers);
    }
    const envelope = { id: `chatcmpl-fake${index}`, created: this.created, model: entry.model ?? body.model ?? 'fake-model' };
    if (body.stream !== true) return sendJson(res, 200, completionBody(entry, envelope));
    const events = streamEvents(entry, envelope, body.stream_options?.include_usage === true);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (!entry.chunkDelayMs && entry.dropAfterChunks === undefined) return void res.end(events.join(''));
    this.writeSlowly(events, entry, res);
  }

  private writeSlowly(events: string[], entry: FakeCompletion, res: ServerResponse, at = 0): void {
    if (res.destroyed) return;
    if (at === entry.dropAfterChunks) return void res.socket?.destroy();
    if (at >= events.length) return void res.end();
    res.write(events[at]);
    this.after(entry.chunkDelayMs ?? 0, res, () => this.writeSlowly(events, entry, res, at + 1));
  }

  /** Runs `then` after `ms` unless the client went away first. */
  private after(ms: number, res: ServerResponse, then: () => void): void {
    if (ms <= 0) return then();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      res.off('close', cancel);
      then();
    }, ms);
    const cancel = (): void => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
    this.timers.add(timer);
    res.once('close', cancel);
  }
}

function apiError(message: string, type: string, code: string | null): { error: Record<string, unknown> } {
  return { error: { message, type, param: null, code } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts a fake OpenAI-compatible server on 127.0.0.1 and an ephemeral port. */
export async function startFakeLlm(options: StartFakeLlmOptions = {}): Promise<FakeLlm> {
  const fake = new FakeLlmServer(options);
  await fake.listen();
  return fake;
}

export * from './script.js';
export { textOf, type FakeImage } from './images.js';
export type { FakeTranscription, FakeTranscriptionRequest } from './transcriptions.js';

/**
 * Why OpenAI would refuse this conversation with a 400, or undefined: every
 * assistant message with tool calls must be followed by one tool message per
 * call id, ids must be unique, and a tool message must answer such a call.
 */
export function historyProblem(messages: FakeLlmRequest['messages'] | undefined): string | undefined {
  const seen = new Set<string>();
  let open: string[] = [];
  for (const message of messages ?? []) {
    if (message.role === 'tool') {
      const id = String(message.tool_call_id ?? '');
      if (!open.includes(id)) return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id ${JSON.stringify(id)}).`;
      open = open.filter((other) => other !== id);
      continue;
    }
    if (open.length) return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
    const calls = message.role === 'assistant' ? ((message.tool_calls as Array<{ id?: string }> | undefined) ?? []) : [];
    for (const call of calls) {
      const id = call.id ?? '';
      if (!id) return "Missing required parameter: 'messages[].tool_calls[].id'.";
      if (seen.has(id)) return `Duplicate value for 'tool_call_id' of ${id} in message[${(messages ?? []).indexOf(message)}].`;
      seen.add(id);
    }
    open = calls.map((call) => call.id ?? '');
  }
  if (open.length) return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
  return undefined;
}
