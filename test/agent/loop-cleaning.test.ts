/**
 * The loop cleans every model reply itself: a delegate returns what the model
 * wrote, and whatever the delegate, the loop acts on a cleaned reply.
 */
import { describe, expect, it } from 'vitest';
import { runAgenticLoop, type BatchOutcome, type LoopContext, type LoopDelegate, type TextAction } from '../../src/engine/loop.js';
import { EMPTY_REPLY_FALLBACK, type FinalizedReply } from '../../src/engine/reasoning.js';
import type { LlmResponse, ToolCall } from '../../src/llm/types.js';

function raw(content: string): LlmResponse {
  return { content, toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 }, costUsd: 0, model: 'm' };
}

/** Plays the model's replies as they came, with no cleaning of its own. */
class RawDelegate implements LoopDelegate<never> {
  readonly executed: ToolCall[][] = [];
  readonly replies: FinalizedReply[] = [];

  constructor(private readonly script: LlmResponse[]) {}

  async callLlm(): Promise<LlmResponse> {
    const next = this.script.shift();
    if (!next) throw new Error('script exhausted');
    return next;
  }

  onReply(reply: FinalizedReply): void {
    this.replies.push(reply);
  }

  handleTextResponse(text: string): TextAction<never> {
    return { action: 'return', outcome: { type: 'response', text } };
  }

  async executeToolCalls(calls: ToolCall[], content: string, ctx: LoopContext): Promise<BatchOutcome<never>> {
    this.executed.push(calls);
    ctx.messages.push({ role: 'assistant', content: content || null, toolCalls: calls });
    for (const call of calls) ctx.messages.push({ role: 'tool', toolCallId: call.id, content: 'ok' });
    return { allFailed: false, allSucceeded: true };
  }
}

function context(forceText = false): LoopContext {
  return {
    messages: [{ role: 'system', content: 'sys' }],
    tools: [{ name: 'search', description: 'search', parameters: { type: 'object' } }],
    forceText,
  };
}

describe('runAgenticLoop cleans what callLlm returns', () => {
  it('strips reasoning from the answer', async () => {
    const delegate = new RawDelegate([raw('<think>The user wants a capital.</think>The capital is Paris.')]);

    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'response', text: 'The capital is Paris.' });
    expect(delegate.replies.map((reply) => reply.anomaly)).toEqual([undefined]);
  });

  it('runs a call written as text for an offered tool, and keeps the prose around it', async () => {
    const delegate = new RawDelegate([
      raw('<think>search first</think>Looking it up.\n<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>'),
      raw('Found x.'),
    ]);
    const ctx = context();

    expect(await runAgenticLoop(delegate, ctx)).toEqual({ type: 'response', text: 'Found x.' });
    expect(delegate.executed).toHaveLength(1);
    expect(delegate.executed[0]).toMatchObject([{ name: 'search', arguments: '{"q":"x"}' }]);
    expect(ctx.messages[1]).toMatchObject({ role: 'assistant', content: 'Looking it up.' });
    expect(delegate.replies[0]!.response.toolCalls).toEqual(delegate.executed[0]);
  });

  it('does not recover a written call when no tool was offered', async () => {
    const delegate = new RawDelegate([raw('Here you go. <tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>')]);

    expect(await runAgenticLoop(delegate, context(true))).toEqual({ type: 'response', text: 'Here you go.' });
    expect(delegate.executed).toEqual([]);
  });

  it('answers an empty reply with the fallback sentence and reports the anomaly', async () => {
    const delegate = new RawDelegate([raw('<think>Nothing to add.</think>  ')]);

    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'response', text: EMPTY_REPLY_FALLBACK });
    expect(delegate.replies.map((reply) => reply.anomaly)).toEqual(['empty_reply']);
  });
});
