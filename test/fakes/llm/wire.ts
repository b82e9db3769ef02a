/**
 * Chat Completions response bodies as OpenAI sends them: one JSON object, or a
 * list of SSE chunks (text deltas, tool-call fragments with their `index`, a
 * chunk carrying `finish_reason`, an optional usage chunk, then `[DONE]`).
 */
import type { FakeCompletion, FakeToolCall, FakeUsage } from './script.js';

/** Identity fields shared by every chunk of one response. */
interface Envelope {
  id: string;
  created: number;
  model: string;
}

interface ResolvedCall {
  id: string;
  name: string;
  arguments: string;
}

/** The usage block; `total_tokens` is derived. */
export function usageBlock(usage: FakeUsage = {}): Record<string, unknown> {
  const prompt = usage.prompt_tokens ?? 10;
  const completion = usage.completion_tokens ?? 5;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
  };
}

function resolveCalls(calls: FakeToolCall[] | undefined, envelope: Envelope): ResolvedCall[] {
  return (calls ?? []).map((call, index) => ({
    id: call.id ?? `call_${envelope.id.slice(-6)}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

function finishReasonOf(entry: FakeCompletion, calls: ResolvedCall[]): string {
  return entry.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
}

/** A non-streamed `chat.completion` object. */
export function completionBody(entry: FakeCompletion, envelope: Envelope): Record<string, unknown> {
  const calls = resolveCalls(entry.toolCalls, envelope);
  const message: Record<string, unknown> = { role: 'assistant', content: entry.content ?? null, refusal: null };
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  return {
    ...envelope,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(entry, calls) }],
    usage: usageBlock(entry.usage),
    system_fingerprint: 'fp_fake',
  };
}

function split(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size));
  return parts;
}

function chunk(envelope: Envelope, delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { ...envelope, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

function toolCallChunks(calls: ResolvedCall[], size: number, envelope: Envelope): Record<string, unknown>[] {
  const chunks: Record<string, unknown>[] = [];
  calls.forEach((call, index) => {
    // The first fragment names the call; the rest only carry argument text.
    chunks.push(chunk(envelope, { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const part of split(call.arguments, size)) {
      chunks.push(chunk(envelope, { tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  return chunks;
}

/** The `data:` payloads of a streamed response, `[DONE]` last. */
export function streamEvents(entry: FakeCompletion, envelope: Envelope, includeUsage: boolean): string[] {
  const size = Math.max(1, entry.chunkSize ?? 4);
  const calls = resolveCalls(entry.toolCalls, envelope);
  const chunks = [chunk(envelope, { role: 'assistant', content: '' })];
  for (const part of split(entry.content ?? '', size)) chunks.push(chunk(envelope, { content: part }));
  chunks.push(...toolCallChunks(calls, size, envelope));
  chunks.push(chunk(envelope, {}, finishReasonOf(entry, calls)));
  if (includeUsage) chunks.push({ ...envelope, object: 'chat.completion.chunk', choices: [], usage: usageBlock(entry.usage) });
  return [...chunks.map((data) => `data: ${JSON.stringify(data)}\n\n`), 'data: [DONE]\n\n'];
}
