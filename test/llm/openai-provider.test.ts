import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LlmConfigSchema } from '../../src/config/schema.js';
import { ConfigError, LlmError } from '../../src/errors.js';
import { OpenAiProvider } from '../../src/llm/openai-provider.js';
import type { LlmRequest } from '../../src/llm/types.js';
import {
  authError,
  contextLengthError,
  errorReply,
  hang,
  rateLimited,
  serverError,
  startFakeLlm,
  textReply,
  toolCallReply,
  truncatedToolCallReply,
  type FakeLlm,
} from '../fakes/llm/server.js';

let fake: FakeLlm;

beforeEach(async () => {
  fake = await startFakeLlm();
});

afterEach(async () => {
  await fake.close();
});

function provider(overrides: Record<string, unknown> = {}, random = () => 0.5): OpenAiProvider {
  const settings = LlmConfigSchema.parse({
    baseUrl: fake.url,
    model: 'gpt-4o-mini',
    timeoutMs: 5000,
    retryBaseDelayMs: 20,
    retryMaxDelayMs: 2000,
    ...overrides,
  });
  return new OpenAiProvider(settings, { random });
}

const ask = (extra: Partial<LlmRequest> = {}): LlmRequest => ({ messages: [{ role: 'user', content: 'hello' }], ...extra });

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe('OpenAiProvider: replies', () => {
  it('returns a text reply and sends the conversation in the wire format', async () => {
    fake.enqueue(textReply('Hi there!'));
    const reply = await provider({ temperature: 0.3 }).complete({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'weather?', name: 'alice' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'sunny' },
        { role: 'assistant', content: 'It is sunny.' },
      ],
      tools: [{ name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: {} } }],
    });
    expect(reply).toMatchObject({ content: 'Hi there!', toolCalls: [], finishReason: 'stop', model: 'gpt-4o-mini' });
    const sent = fake.requests[0]!;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?', name: 'alice' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: 'It is sunny.' },
    ]);
    expect(sent.tools).toEqual([
      { type: 'function', function: { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 4096, temperature: 0.3 });
    expect(sent.stream).not.toBe(true);
    expect(fake.requestHeaders[0]!.authorization).toBe('Bearer not-needed');
  });

  it('offers no tools when none are given and sends the configured key', async () => {
    fake.enqueue(textReply('ok'));
    await provider({ apiKey: 'sk-test-key' }).complete(ask({ tools: [] }));
    expect(fake.requests[0]!.tools).toBeUndefined();
    expect(fake.requestHeaders[0]!.authorization).toBe('Bearer sk-test-key');
  });

  it('uses max_completion_tokens for models that require it', async () => {
    fake.enqueue(textReply('ok'));
    await provider({ model: 'openai/gpt-5-mini' }).complete(ask({ maxTokens: 100 }));
    expect(fake.requests[0]).toMatchObject({ max_completion_tokens: 100 });
    expect(fake.requests[0]!.max_tokens).toBeUndefined();
  });

  it('returns tool calls with their arguments as JSON text', async () => {
    fake.enqueue(
      toolCallReply([
        { id: 'call_a', name: 'search', arguments: { query: 'pincer' } },
        { id: 'call_b', name: 'read_file', arguments: { path: 'a.txt' } },
      ]),
    );
    const reply = await provider().complete(ask());
    expect(reply.finishReason).toBe('tool_calls');
    expect(reply.content).toBe('');
    expect(reply.toolCalls).toEqual([
      { id: 'call_a', name: 'search', arguments: '{"query":"pincer"}' },
      { id: 'call_b', name: 'read_file', arguments: '{"path":"a.txt"}' },
    ]);
  });

  it('reports usage and its cost from the price table and config prices', async () => {
    const usage = { prompt_tokens: 2000, completion_tokens: 1000, cached_tokens: 1000 };
    fake.enqueue(textReply('a', { usage }), textReply('b', { usage }), textReply('c', { usage }));
    const builtin = await provider().complete(ask());
    expect(builtin.usage).toEqual({ inputTokens: 2000, outputTokens: 1000, cachedTokens: 1000 });
    // gpt-4o-mini: 1000 fresh at 0.15, 1000 cached at 0.075, 1000 out at 0.6 per million.
    expect(builtin.costUsd).toBeCloseTo(0.000825, 9);
    const priced = await provider({ model: 'my-local', prices: { 'my-local': { input: 1, output: 2 } } }).complete(ask());
    expect(priced.costUsd).toBeCloseTo((2000 * 1 + 1000 * 2) / 1e6, 9);
    const unknown = await provider({ model: 'llama-3-8b' }).complete(ask());
    expect(unknown.costUsd).toBe(0);
  });

  it('maps finish reasons, keeping truncated tool calls marked as length', async () => {
    fake.enqueue(
      truncatedToolCallReply('write_file'),
      textReply('cut', { finishReason: 'content_filter' }),
      textReply('done', { finishReason: 'eos_token' }),
      toolCallReply([{ name: 'search', arguments: {} }], { finishReason: 'stop' }),
    );
    const llm = provider();
    const truncated = await llm.complete(ask());
    expect(truncated.finishReason).toBe('length');
    expect(truncated.toolCalls[0]).toMatchObject({ name: 'write_file', arguments: '{"path": "notes.txt", "content": "Once upon a ti' });
    expect((await llm.complete(ask())).finishReason).toBe('content_filter');
    expect((await llm.complete(ask())).finishReason).toBe('stop');
    expect((await llm.complete(ask())).finishReason).toBe('tool_calls');
  });

  it('throws a ConfigError when no model is configured', () => {
    expect(() => new OpenAiProvider(LlmConfigSchema.parse({ baseUrl: fake.url }))).toThrow(ConfigError);
  });
});

describe('OpenAiProvider: streaming', () => {
  it('forwards text deltas in order and asks for usage', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    fake.enqueue(textReply(text, { chunkSize: 5, usage: { prompt_tokens: 7, completion_tokens: 11 } }));
    const deltas: string[] = [];
    const reply = await provider().complete(ask({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas.length).toBe(Math.ceil(text.length / 5));
    expect(deltas.join('')).toBe(text);
    expect(reply).toMatchObject({ content: text, finishReason: 'stop', usage: { inputTokens: 7, outputTokens: 11, cachedTokens: 0 } });
    expect(fake.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('reassembles tool-call argument fragments by index', async () => {
    const first = { query: 'weather in Oslo', limit: 3 };
    const second = { path: 'notes/today.md', content: 'line one\nline "two"' };
    fake.enqueue(
      toolCallReply(
        [
          { id: 'call_1', name: 'search', arguments: first },
          { id: 'call_2', name: 'write_file', arguments: second },
        ],
        { content: 'Working on it.', chunkSize: 3 },
      ),
    );
    const deltas: string[] = [];
    const reply = await provider().complete(ask({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas.join('')).toBe('Working on it.');
    expect(reply.finishReason).toBe('tool_calls');
    expect(reply.toolCalls.map((call) => [call.id, call.name, JSON.parse(call.arguments)])).toEqual([
      ['call_1', 'search', first],
      ['call_2', 'write_file', second],
    ]);
  });

  it('does not stream when llm.stream is off but still hands the text over once', async () => {
    fake.enqueue(textReply('whole answer'));
    const deltas: string[] = [];
    await provider({ stream: false }).complete(ask({ onTextDelta: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(['whole answer']);
    expect(fake.requests[0]!.stream).not.toBe(true);
  });

  it('aborts mid-stream and says so instead of returning half an answer', async () => {
    fake.enqueue(textReply('x'.repeat(200), { chunkSize: 10, chunkDelayMs: 30 }));
    const controller = new AbortController();
    const pending = provider().complete(ask({ signal: controller.signal, onTextDelta: () => controller.abort() }));
    const error = await failure(pending);
    expect(error.kind).toBe('aborted');
    expect(fake.served).toBe(1);
  });

  it('times out a stream that stalls after its headers', async () => {
    fake.enqueue(textReply('slow answer', { chunkSize: 2, chunkDelayMs: 400 }));
    const error = await failure(provider({ timeoutMs: 300, maxRetries: 0 }).complete(ask({ onTextDelta: () => {} })));
    expect(error.kind).toBe('timeout');
    expect(error.retryable).toBe(true);
  });

  it('does not retry a broken stream once text reached the listener', async () => {
    fake.enqueue(textReply('partial answer that never ends', { chunkSize: 4, chunkDelayMs: 20, dropAfterChunks: 3 }), textReply('again'));
    const deltas: string[] = [];
    const error = await failure(provider().complete(ask({ onTextDelta: (delta) => deltas.push(delta) })));
    expect(error.kind).toBe('connection');
    expect(deltas.join('')).toBe('partial ');
    expect(fake.served).toBe(1);
  });
});

describe('OpenAiProvider: failures and retries', () => {
  it('waits for Retry-After on a 429, then succeeds', async () => {
    fake.enqueue(rateLimited(1), textReply('finally'));
    const started = Date.now();
    const reply = await provider().complete(ask());
    expect(reply.content).toBe('finally');
    expect(fake.served).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('reports a 429 at once when the server asks for a longer wait than retryMaxDelayMs', async () => {
    fake.enqueue(rateLimited(120), textReply('never'));
    const started = Date.now();
    const error = await failure(provider({ retryMaxDelayMs: 5000 }).complete(ask()));
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, status: 429 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.served).toBe(1);
  });

  it('retries a 500 and logs the retry at warn without the key', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const settings = LlmConfigSchema.parse({ baseUrl: fake.url, model: 'gpt-4o-mini', apiKey: 'sk-very-secret', retryBaseDelayMs: 10 });
    const llm = new OpenAiProvider(settings, { logger: pino({ level: 'warn' }, destination) });
    fake.enqueue(serverError(), textReply('recovered'));
    expect((await llm.complete(ask())).content).toBe('recovered');
    expect(fake.served).toBe(2);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, retry: 1, kind: 'server', status: 500 });
    expect(lines[0]).not.toContain('sk-very-secret');
  });

  it('reports a 401 as an auth error without retrying', async () => {
    fake.enqueue(authError(), textReply('never'));
    const error = await failure(provider().complete(ask()));
    expect(error).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
    expect(error.message).toContain('Incorrect API key');
    expect(fake.served).toBe(1);
  });

  it('types a context-length 400 and does not retry it', async () => {
    fake.enqueue(contextLengthError(), textReply('never'));
    const error = await failure(provider().complete(ask()));
    expect(error).toMatchObject({ kind: 'context_length', retryable: false, status: 400 });
    expect(error.message).toContain('maximum context length is 8192 tokens');
    expect(fake.served).toBe(1);
  });

  it('fails fast on other client errors with the server message', async () => {
    fake.enqueue(errorReply(422, { message: "Invalid value for 'temperature'", type: 'invalid_request_error', code: 'invalid_value' }));
    const error = await failure(provider().complete(ask()));
    expect(error).toMatchObject({ kind: 'bad_request', retryable: false, status: 422 });
    expect(error.message).toBe("the LLM endpoint rejected the request (422): Invalid value for 'temperature'");
    expect(fake.served).toBe(1);
  });

  it('does not retry a 429 for an exhausted quota', async () => {
    fake.enqueue(errorReply(429, { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' }));
    const error = await failure(provider().complete(ask()));
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: false });
    expect(fake.served).toBe(1);
  });

  it('aborts a hanging request promptly', async () => {
    fake.enqueue(hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await failure(provider().complete(ask({ signal: controller.signal })));
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.served).toBe(1);
  });

  it('aborts during the backoff wait', async () => {
    fake.enqueue(serverError(), textReply('never'));
    const controller = new AbortController();
    const llm = provider({ retryBaseDelayMs: 10_000, retryMaxDelayMs: 10_000 }, () => 0.99);
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const error = await failure(llm.complete(ask({ signal: controller.signal })));
    expect(error.kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.served).toBe(1);
  });

  it('retries an attempt that times out', async () => {
    fake.enqueue(hang(), textReply('second try'));
    const started = Date.now();
    const reply = await provider({ timeoutMs: 300 }).complete(ask());
    expect(reply.content).toBe('second try');
    expect(fake.served).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('gives up after maxRetries with a readable error', async () => {
    fake.setResponder(() => serverError(503));
    const error = await failure(provider({ maxRetries: 2 }).complete(ask()));
    expect(fake.served).toBe(3);
    expect(error).toMatchObject({ kind: 'server', retryable: true, status: 503 });
    expect(error.message).toBe('the LLM server failed (503): The server had an error while processing your request. Sorry about that!');
  });

  it('reports an unreachable endpoint as a connection error after retrying', async () => {
    const url = fake.url;
    await fake.close();
    const settings = LlmConfigSchema.parse({ baseUrl: url, model: 'm', maxRetries: 1, retryBaseDelayMs: 10 });
    const error = await failure(new OpenAiProvider(settings).complete(ask()));
    expect(error).toMatchObject({ kind: 'connection', retryable: true });
    expect(error.message).toMatch(/could not reach the LLM endpoint/);
    fake = await startFakeLlm();
  });
});
