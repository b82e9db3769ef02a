/**
 * The engine with the real OpenAI provider against the fake Chat Completions
 * server: what the guards do is read back from the requests the server received.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPEATED_FAILURE_NOTICE, TRUNCATED_CALLS_NOTICE } from '../../src/engine/guards/notices.js';
import { TOOL_INTENT_NUDGE } from '../../src/engine/guards/tool-intent.js';
import { runAgenticLoop, type BatchOutcome, type LoopContext, type LoopDelegate, type TextAction } from '../../src/engine/loop.js';
import { EMPTY_REPLY_FALLBACK } from '../../src/engine/reasoning.js';
import { LlmConfigSchema } from '../../src/config/schema.js';
import { LlmError } from '../../src/errors.js';
import { OpenAiProvider } from '../../src/llm/openai-provider.js';
import type { LlmResponse, ToolCall, ToolDefinition } from '../../src/llm/types.js';
import {
  authError,
  rateLimited,
  startFakeLlm,
  textReply,
  toolCallReply,
  truncatedToolCallReply,
  type FakeLlm,
  type FakeLlmRequest,
} from '../fakes/llm/server.js';

const TOOLS: ToolDefinition[] = [
  { name: 'search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'write_file', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
];

/** A tiny tool registry: records every execution; tools named in `failing` return an error. */
class ToolBox {
  readonly executed: ToolCall[] = [];
  readonly failing = new Set<string>();

  run(call: ToolCall): { ok: boolean; content: string } {
    if (!TOOLS.some((tool) => tool.name === call.name)) return { ok: false, content: `Error: unknown tool ${call.name}` };
    this.executed.push(call);
    if (this.failing.has(call.name)) return { ok: false, content: `Error: ${call.name} is unavailable right now` };
    return { ok: true, content: `${call.name} result for ${call.arguments}` };
  }
}

/** A chat-like delegate over the real provider: text replies are the answer; the loop cleans them. */
class ProviderDelegate implements LoopDelegate<never> {
  constructor(
    private readonly provider: OpenAiProvider,
    private readonly tools: ToolBox,
    private readonly onTextDelta?: (delta: string) => void,
  ) {}

  async callLlm(ctx: LoopContext): Promise<LlmResponse> {
    return this.provider.complete({
      messages: ctx.messages,
      ...(ctx.forceText ? {} : { tools: ctx.tools }),
      ...(this.onTextDelta ? { onTextDelta: this.onTextDelta } : {}),
    });
  }

  handleTextResponse(text: string): TextAction<never> {
    return { action: 'return', outcome: { type: 'response', text } };
  }

  async executeToolCalls(calls: ToolCall[], content: string, ctx: LoopContext): Promise<BatchOutcome<never>> {
    ctx.messages.push({ role: 'assistant', content: content || null, toolCalls: calls });
    const results = calls.map((call) => this.tools.run(call));
    calls.forEach((call, i) => ctx.messages.push({ role: 'tool', toolCallId: call.id, content: results[i]!.content }));
    return { allFailed: results.every((r) => !r.ok), allSucceeded: results.every((r) => r.ok) };
  }
}

let fake: FakeLlm;
let toolBox: ToolBox;

beforeEach(async () => {
  fake = await startFakeLlm();
  toolBox = new ToolBox();
});

afterEach(async () => {
  await fake.close();
});

function provider(): OpenAiProvider {
  return new OpenAiProvider(LlmConfigSchema.parse({ baseUrl: fake.url, apiKey: 'sk-test', model: 'fake-model', maxRetries: 2, retryBaseDelayMs: 10 }));
}

function context(): LoopContext {
  return { messages: [{ role: 'system', content: 'You are a helpful bot.' }, { role: 'user', content: 'Find x for me.' }], tools: TOOLS, forceText: false };
}

function run(onTextDelta?: (delta: string) => void) {
  return runAgenticLoop(new ProviderDelegate(provider(), toolBox, onTextDelta), context());
}

/** Whether the request offered any tool. */
const offersTools = (request: FakeLlmRequest) => (request.tools?.length ?? 0) > 0;

/** How many user messages of a request carry exactly `content`. */
const countUser = (request: FakeLlmRequest, content: string) =>
  request.messages.filter((m) => m.role === 'user' && m.content === content).length;

const search = (q: string) => toolCallReply([{ name: 'search', arguments: { q } }]);

describe('loop with the real provider: repeated failing batches', () => {
  it('warns after the 2nd identical failing batch and withholds tools after the 4th', async () => {
    toolBox.failing.add('search');
    fake.enqueue(search('x'), search('x'), search('x'), search('x'), textReply('Search is down, sorry.'));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: 'Search is down, sorry.' });
    expect(toolBox.executed).toHaveLength(4);
    expect(fake.requests).toHaveLength(5);
    // The request after batch n is requests[n].
    expect(countUser(fake.requests[1]!, REPEATED_FAILURE_NOTICE)).toBe(0);
    expect(countUser(fake.requests[2]!, REPEATED_FAILURE_NOTICE)).toBe(1);
    expect(fake.requests[2]!.messages.at(-1)).toEqual({ role: 'user', content: REPEATED_FAILURE_NOTICE });
    expect(countUser(fake.requests[4]!, REPEATED_FAILURE_NOTICE)).toBe(3);
    expect(fake.requests.map(offersTools)).toEqual([true, true, true, true, false]);
  });

  it('does not warn when the failing arguments change between batches', async () => {
    toolBox.failing.add('search');
    fake.enqueue(search('a'), search('b'), search('c'), search('d'), textReply('No luck.'));

    await run();

    expect(fake.requests.every((request) => countUser(request, REPEATED_FAILURE_NOTICE) === 0)).toBe(true);
    expect(fake.requests.map(offersTools)).toEqual([true, true, true, true, true]);
  });
});

describe('loop with the real provider: truncated tool calls', () => {
  it('never runs cut-off calls, keeps the prose and sends the notice next', async () => {
    fake.enqueue({ ...truncatedToolCallReply('write_file'), content: 'Writing the story to notes.txt.' }, textReply('Here is a shorter plan.'));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: 'Here is a shorter plan.' });
    expect(toolBox.executed).toEqual([]);
    const next = fake.requests[1]!.messages;
    expect(next.slice(-2)).toEqual([
      { role: 'assistant', content: 'Writing the story to notes.txt.' },
      { role: 'user', content: TRUNCATED_CALLS_NOTICE },
    ]);
    // No assistant message carries the discarded call, so no tool result is owed for it.
    expect(next.some((m) => 'tool_calls' in m)).toBe(false);
  });

  it('withholds tools after the 3rd truncated reply', async () => {
    fake.enqueue(truncatedToolCallReply('write_file'), truncatedToolCallReply('write_file'), truncatedToolCallReply('write_file'), textReply('I will answer in text.'));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: 'I will answer in text.' });
    expect(toolBox.executed).toEqual([]);
    expect(fake.requests.map(offersTools)).toEqual([true, true, true, false]);
    expect(countUser(fake.requests[3]!, TRUNCATED_CALLS_NOTICE)).toBe(3);
  });
});

describe('loop with the real provider: LLM errors', () => {
  it('waits out a 429 with Retry-After, retries and answers', async () => {
    fake.enqueue(rateLimited(1), textReply('Hello after the wait.'));

    const started = Date.now();
    const outcome = await run();
    const elapsed = Date.now() - started;

    expect(outcome).toEqual({ type: 'response', text: 'Hello after the wait.' });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.messages).toEqual(fake.requests[0]!.messages);
    expect(elapsed).toBeGreaterThanOrEqual(950);
  });

  it('fails at once on a 401 with a readable auth error', async () => {
    fake.enqueue(authError(), textReply('never sent'));

    const error = await run().then(
      () => undefined,
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(LlmError);
    const llmError = error as LlmError;
    expect(llmError.kind).toBe('auth');
    expect(llmError.retryable).toBe(false);
    expect(llmError.message).toMatch(/401/);
    expect(llmError.message).toContain('Incorrect API key provided');
    expect(fake.requests).toHaveLength(1);
    expect(fake.pending).toBe(1);
  });
});

describe('loop with the real provider: tool intent without a call', () => {
  const intent = 'Let me search for that.';

  it('nudges twice, then returns the 3rd announcement as the answer', async () => {
    fake.enqueue(textReply(intent), textReply(intent), textReply(intent));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: intent });
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[1]!.messages.slice(-2)).toEqual([
      { role: 'assistant', content: intent },
      { role: 'user', content: TOOL_INTENT_NUDGE },
    ]);
    expect(countUser(fake.requests[2]!, TOOL_INTENT_NUDGE)).toBe(2);
    expect(fake.requests.map(offersTools)).toEqual([true, true, true]);
  });

  it('runs the call the model makes after a nudge', async () => {
    fake.enqueue(textReply(intent), search('x'), textReply('x is 42.'));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: 'x is 42.' });
    expect(countUser(fake.requests[1]!, TOOL_INTENT_NUDGE)).toBe(1);
    expect(toolBox.executed.map((call) => call.name)).toEqual(['search']);
  });

  it('does not nudge a plain answer', async () => {
    fake.enqueue(textReply('x is 42.'));
    expect(await run()).toEqual({ type: 'response', text: 'x is 42.' });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('loop with the real provider: tool calls written as text', () => {
  it('runs a written call of a known tool and sends its result back', async () => {
    fake.enqueue(textReply('<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>'), textReply('x is 42.'));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: 'x is 42.' });
    expect(toolBox.executed).toHaveLength(1);
    expect(toolBox.executed[0]).toMatchObject({ name: 'search', arguments: '{"q":"x"}' });
    const next = fake.requests[1]!.messages;
    const callId = toolBox.executed[0]!.id;
    expect(next).toContainEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: callId, type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }],
    });
    expect(next.at(-1)).toEqual({ role: 'tool', tool_call_id: callId, content: 'search result for {"q":"x"}' });
  });

  it('does not run a written call of an unknown tool: the prose is the answer', async () => {
    fake.enqueue(textReply('I have no tool for that. <tool_call>{"name":"delete_everything","arguments":{}}</tool_call>'));

    const outcome = await run();

    expect(outcome).toEqual({ type: 'response', text: 'I have no tool for that.' });
    expect(toolBox.executed).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('answers with the fallback sentence when the unknown call was all the reply held', async () => {
    fake.enqueue(textReply('<tool_call>{"name":"delete_everything","arguments":{}}</tool_call>'));

    expect(await run()).toEqual({ type: 'response', text: EMPTY_REPLY_FALLBACK });
    expect(toolBox.executed).toEqual([]);
  });
});

describe('loop with the real provider: streaming', () => {
  it('delivers text deltas in order and answers with their concatenation', async () => {
    const answer = 'The quick brown fox jumps over the lazy dog, twice over.';
    fake.enqueue(search('fox'), textReply(answer, { chunkSize: 5 }));
    const deltas: string[] = [];

    const outcome = await run((delta) => deltas.push(delta));

    expect(fake.requests.every((request) => request.stream === true)).toBe(true);
    expect(toolBox.executed).toHaveLength(1);
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(answer);
    expect(outcome).toEqual({ type: 'response', text: deltas.join('') });
  });
});
