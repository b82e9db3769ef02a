import { describe, expect, it } from 'vitest';
import { LlmError } from '../../src/errors.js';
import { CONTINUE_PROMPT } from '../../src/engine/guards/continuation.js';
import type { LoopFinding } from '../../src/engine/guards/loop-detector.js';
import {
  REPEATED_ANSWER_NOTICE,
  REPEATED_FAILURE_NOTICE,
  REPEATED_SUCCESS_NOTICE,
  TRUNCATED_ANSWER_NOTE,
  TRUNCATED_CALLS_NOTICE,
} from '../../src/engine/guards/notices.js';
import { REPETITION_CUT_NOTE } from '../../src/engine/guards/repeated-text.js';
import { DEFAULT_LOOP_GUARDS } from '../../src/config/schema.js';
import { TOOL_INTENT_NUDGE } from '../../src/engine/guards/tool-intent.js';
import {
  runAgenticLoop,
  type BatchOutcome,
  type LoopContext,
  type LoopDelegate,
  type LoopOutcome,
  type LoopSignal,
  type TextAction,
} from '../../src/engine/loop.js';
import type { FinishReason, LlmResponse, ToolCall } from '../../src/llm/types.js';

const usage = { inputTokens: 1, outputTokens: 1, cachedTokens: 0 };

function text(content: string, finishReason: FinishReason = 'stop'): LlmResponse {
  return { content, toolCalls: [], finishReason, usage, costUsd: 0, model: 'm' };
}

function calls(list: Array<[string, Record<string, unknown> | string]>, finishReason: FinishReason = 'tool_calls', content = ''): LlmResponse {
  const toolCalls: ToolCall[] = list.map(([name, args], i) => ({
    id: `c${i}`,
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
  }));
  return { content, toolCalls, finishReason, usage, costUsd: 0, model: 'm' };
}

/** A delegate that plays a script of model replies and records what the loop asked for. */
class ScriptedDelegate implements LoopDelegate<string> {
  readonly executed: ToolCall[][] = [];
  readonly forceTextAtCall: boolean[] = [];
  readonly toolsOfferedAtCall: number[] = [];
  readonly nudges: string[] = [];
  readonly continuingAtCall: boolean[] = [];
  readonly loops: LoopFinding[] = [];
  reviews: Array<string | undefined> = [];
  signals: LoopSignal[] = [];
  failing = new Set<string>();
  outcomeOnExecute: LoopOutcome<string> | undefined;
  early: LoopOutcome<string> | undefined;
  error: Error | undefined;
  stopped = false;

  constructor(private readonly script: LlmResponse[]) {}

  checkSignals(): LoopSignal {
    return this.signals.shift() ?? { type: 'continue' };
  }

  beforeLlmCall(): LoopOutcome<string> | undefined {
    return this.early;
  }

  async callLlm(ctx: LoopContext, _iteration: number, continuing = false): Promise<LlmResponse> {
    this.continuingAtCall.push(continuing);
    this.forceTextAtCall.push(ctx.forceText);
    this.toolsOfferedAtCall.push(ctx.forceText ? 0 : ctx.tools.length);
    if (this.error) throw this.error;
    const next = this.script.shift();
    if (!next) throw new Error('script exhausted');
    return next;
  }

  handleTextResponse(textReply: string): TextAction<string> {
    // Like a background job: a reply marked "continue:" is progress, not the end.
    if (textReply.startsWith('continue:')) return { action: 'continue' };
    return { action: 'return', outcome: { type: 'response', text: textReply } };
  }

  async executeToolCalls(toolCalls: ToolCall[], content: string, ctx: LoopContext): Promise<BatchOutcome<string>> {
    this.executed.push(toolCalls);
    ctx.messages.push({ role: 'assistant', content, toolCalls });
    for (const call of toolCalls) {
      ctx.messages.push({ role: 'tool', toolCallId: call.id, content: this.failing.has(call.name) ? 'Error: failed' : 'ok' });
    }
    const failed = toolCalls.filter((call) => this.failing.has(call.name)).length;
    return { outcome: this.outcomeOnExecute, allFailed: failed === toolCalls.length, allSucceeded: failed === 0 };
  }

  onToolIntentNudge(textReply: string): void {
    this.nudges.push(textReply);
  }

  reviewAnswer(): string | undefined {
    return this.reviews.shift();
  }

  onLoopDetected(finding: LoopFinding): LoopOutcome<string> {
    this.loops.push(finding);
    return { type: 'need_approval', pending: `loop: ${finding.detector}` };
  }

  isStopped(): boolean {
    return this.stopped;
  }
}

function context(): LoopContext {
  return {
    messages: [{ role: 'system', content: 'sys' }],
    tools: [{ name: 'search', description: 'search', parameters: { type: 'object' } }],
    forceText: false,
  };
}

const count = (ctx: LoopContext, content: string) =>
  ctx.messages.filter((m) => m.role === 'user' && m.content === content).length;

describe('runAgenticLoop', () => {
  it('returns the first text reply as the response', async () => {
    const delegate = new ScriptedDelegate([text('Hello there.')]);
    const outcome = await runAgenticLoop(delegate, context());
    expect(outcome).toEqual({ type: 'response', text: 'Hello there.' });
  });

  it('runs tool calls, then returns the text that follows', async () => {
    const delegate = new ScriptedDelegate([calls([['search', { q: 'x' }]]), text('Found it.')]);
    const ctx = context();
    const outcome = await runAgenticLoop(delegate, ctx);
    expect(outcome).toEqual({ type: 'response', text: 'Found it.' });
    expect(delegate.executed).toHaveLength(1);
    expect(ctx.messages.some((m) => m.role === 'tool')).toBe(true);
  });

  describe('tool-intent nudge', () => {
    it('allows the 2nd nudge in a row and not the 3rd', async () => {
      const intent = 'Let me search for that.';
      const delegate = new ScriptedDelegate([text(intent), text(intent), text(intent)]);
      const ctx = context();
      const outcome = await runAgenticLoop(delegate, ctx);
      expect(delegate.nudges).toHaveLength(2);
      expect(count(ctx, TOOL_INTENT_NUDGE)).toBe(2);
      expect(outcome).toEqual({ type: 'response', text: intent });
    });

    it('does not nudge when no tools are available', async () => {
      const delegate = new ScriptedDelegate([text('Let me search for that.')]);
      const ctx = { ...context(), tools: [] };
      await runAgenticLoop(delegate, ctx);
      expect(delegate.nudges).toHaveLength(0);
    });

    it('does not nudge when text is forced', async () => {
      const delegate = new ScriptedDelegate([text('Let me search for that.')]);
      const ctx = { ...context(), forceText: true };
      await runAgenticLoop(delegate, ctx);
      expect(delegate.nudges).toHaveLength(0);
    });

    it('resets the streak after a tool call', async () => {
      const intent = 'Let me search for that.';
      const delegate = new ScriptedDelegate([text(intent), text(intent), calls([['search', {}]]), text(intent), text(intent), text('done')]);
      const outcome = await runAgenticLoop(delegate, context());
      expect(delegate.nudges).toHaveLength(4);
      expect(outcome).toEqual({ type: 'response', text: 'done' });
    });
  });

  describe('truncated tool calls (finish_reason length)', () => {
    it('never executes truncated calls and keeps the prose', async () => {
      const delegate = new ScriptedDelegate([calls([['search', '{"q": "unfinis']], 'length', 'Working on it'), text('ok')]);
      const ctx = context();
      await runAgenticLoop(delegate, ctx);
      expect(delegate.executed).toHaveLength(0);
      expect(ctx.messages).toContainEqual({ role: 'assistant', content: 'Working on it' });
      expect(count(ctx, TRUNCATED_CALLS_NOTICE)).toBe(1);
    });

    it('forces text after the 3rd truncation, not the 2nd', async () => {
      const cut = () => calls([['search', '{"q": "x']], 'length');
      const two = new ScriptedDelegate([cut(), cut(), text('ok')]);
      await runAgenticLoop(two, context());
      expect(two.forceTextAtCall).toEqual([false, false, false]);

      const three = new ScriptedDelegate([cut(), cut(), cut(), text('ok')]);
      await runAgenticLoop(three, context());
      expect(three.forceTextAtCall).toEqual([false, false, false, true]);
    });

    it('counts truncations cumulatively across successful batches', async () => {
      const cut = () => calls([['search', '{"q": "x']], 'length');
      const ok = () => calls([['search', { q: 'y' }]]);
      const delegate = new ScriptedDelegate([cut(), ok(), cut(), ok(), cut(), text('ok')]);
      await runAgenticLoop(delegate, context());
      expect(delegate.forceTextAtCall.at(-1)).toBe(true);
    });
  });

  describe('repeated failing batches', () => {
    const failingRun = (n: number) => {
      const delegate = new ScriptedDelegate([...Array.from({ length: n }, () => calls([['search', { b: 1, a: 2 }]])), text('giving up')]);
      delegate.failing.add('search');
      return delegate;
    };

    it.each([
      [1, 0, false],
      [2, 1, false],
      [3, 2, false],
      [4, 3, true],
    ])('after %i identical failing batches: %i warnings, forceText %s', async (n, warnings, forced) => {
      const delegate = failingRun(n);
      const ctx = context();
      await runAgenticLoop(delegate, ctx);
      expect(count(ctx, REPEATED_FAILURE_NOTICE)).toBe(warnings);
      expect(delegate.forceTextAtCall.at(-1)).toBe(forced);
    });

    it('treats reordered argument keys as the same call', async () => {
      const delegate = new ScriptedDelegate([calls([['search', { a: 1, b: { d: 1, c: 2 } }]]), calls([['search', { b: { c: 2, d: 1 }, a: 1 }]]), text('x')]);
      delegate.failing.add('search');
      const ctx = context();
      await runAgenticLoop(delegate, ctx);
      expect(count(ctx, REPEATED_FAILURE_NOTICE)).toBe(1);
    });

    it('resets the streak on a text reply', async () => {
      const fail = () => calls([['search', { q: 1 }]]);
      const delegate = new ScriptedDelegate([fail(), text('continue: still thinking'), fail(), text('end')]);
      delegate.failing.add('search');
      const ctx = context();
      await runAgenticLoop(delegate, ctx);
      expect(count(ctx, REPEATED_FAILURE_NOTICE)).toBe(0);
    });

    it('does not count a batch that partly succeeded', async () => {
      const mixed = () => calls([['search', { q: 1 }], ['fetch', { u: 1 }]]);
      const delegate = new ScriptedDelegate([mixed(), mixed(), mixed(), text('end')]);
      delegate.failing.add('search');
      const ctx = context();
      await runAgenticLoop(delegate, ctx);
      expect(count(ctx, REPEATED_FAILURE_NOTICE)).toBe(0);
    });
  });

  describe('the same answer again in a run that goes on after answers', () => {
    it.each([
      [1, 0, 'script exhausted'],
      [2, 1, 'script exhausted'],
      [3, 1, 'failure'],
    ])('after %i identical answers: %i warnings, then %s', async (n, warnings, end) => {
      const delegate = new ScriptedDelegate(Array.from({ length: n }, (_, i) => text(i % 2 ? 'continue:  Still   working.' : 'continue: still working.')));
      const ctx = context();
      const outcome = await runAgenticLoop(delegate, ctx).catch((error: Error) => error.message);
      expect(count(ctx, REPEATED_ANSWER_NOTICE)).toBe(warnings);
      if (end === 'failure') expect(outcome).toEqual({ type: 'failure', reason: 'I kept repeating myself: the same answer 3 times in a row without finishing ("continue: still working.").' });
      else expect(outcome).toBe(end);
    });

    it('starts over after a tool call or a different answer', async () => {
      const same = () => text('continue: still working.');
      const delegate = new ScriptedDelegate([same(), same(), calls([['search', { q: 1 }]]), same(), same(), text('continue: other'), same(), same(), text('done')]);
      const ctx = context();
      expect(await runAgenticLoop(delegate, ctx)).toEqual({ type: 'response', text: 'done' });
      expect(count(ctx, REPEATED_ANSWER_NOTICE)).toBe(3);
    });
  });

  describe('repeated successful calls', () => {
    it('warns at the 5th identical call in a row and forces text at the 6th', async () => {
      const same = () => calls([['search', { q: 'same' }]]);
      const four = new ScriptedDelegate([same(), same(), same(), same(), text('x')]);
      const ctx4 = context();
      await runAgenticLoop(four, ctx4);
      expect(count(ctx4, REPEATED_SUCCESS_NOTICE)).toBe(0);

      const six = new ScriptedDelegate([same(), same(), same(), same(), same(), same(), text('x')]);
      const ctx6 = context();
      await runAgenticLoop(six, ctx6);
      expect(count(ctx6, REPEATED_SUCCESS_NOTICE)).toBe(2);
      expect(six.forceTextAtCall).toEqual([false, false, false, false, false, false, true]);
    });
  });

  it('cuts a reply that loops at its end, keeps what came before and says it was cut', async () => {
    const looping = 'Here is the plan for the migration.\n\n' + 'The same sentence comes back again and again. '.repeat(30);
    const delegate = new ScriptedDelegate([text(looping)]);
    const outcome = await runAgenticLoop(delegate, context());
    expect(outcome.type).toBe('response');
    if (outcome.type !== 'response') return;
    expect(outcome.text.startsWith('Here is the plan for the migration.')).toBe(true);
    expect(outcome.text).toContain('The same sentence comes back again and again.');
    expect(outcome.text.endsWith(REPETITION_CUT_NOTE)).toBe(true);
    expect(outcome.text.length).toBeLessThan(looping.length / 4);
  });

  it('delivers a long answer that reuses phrases whole', async () => {
    const paragraphs = Array.from({ length: 20 }, (_, i) => `In step ${i + 1}, as discussed above, we check the inputs and then we check the outputs of part ${i + 1}. ` + 'x'.repeat(400));
    const long = paragraphs.join('\n\n');
    const delegate = new ScriptedDelegate([text(long)]);
    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'response', text: long });
  });

  describe('text cut by the output limit (finish_reason length)', () => {
    it('continues it and stitches the pieces without the overlap, leaving one whole answer', async () => {
      const delegate = new ScriptedDelegate([text('The first part of the answer ends', 'length'), text('answer ends here, and the rest follows.')]);
      const ctx = context();
      const outcome = await runAgenticLoop(delegate, ctx);
      expect(outcome).toEqual({ type: 'response', text: 'The first part of the answer ends here, and the rest follows.' });
      expect(delegate.continuingAtCall).toEqual([false, true]);
      // The pieces and the request to continue do not stay in the conversation.
      expect(count(ctx, CONTINUE_PROMPT)).toBe(0);
      expect(ctx.messages.filter((m) => m.role === 'assistant')).toHaveLength(0);
    });

    it('offers no tools while continuing, and restores them after', async () => {
      const delegate = new ScriptedDelegate([text('Part one', 'length'), text(' and part two.')]);
      await runAgenticLoop(delegate, context());
      expect(delegate.forceTextAtCall).toEqual([false, true]);
    });

    it('stops after the third continuation and says the answer was cut', async () => {
      const delegate = new ScriptedDelegate([text('a1', 'length'), text(' b2', 'length'), text(' c3', 'length'), text(' d4', 'length'), text('never')]);
      const outcome = await runAgenticLoop(delegate, context());
      expect(delegate.continuingAtCall).toEqual([false, true, true, true]);
      expect(outcome.type).toBe('response');
      if (outcome.type === 'response') {
        expect(outcome.text.startsWith('a1 b2 c3 d4')).toBe(true);
        expect(outcome.text.endsWith(TRUNCATED_ANSWER_NOTE)).toBe(true);
      }
    });

    it('honours maxContinuations', async () => {
      const delegate = new ScriptedDelegate([text('a1', 'length'), text(' b2', 'length')]);
      const outcome = await runAgenticLoop(delegate, context(), { maxContinuations: 1 });
      expect(delegate.continuingAtCall).toEqual([false, true]);
      if (outcome.type === 'response') expect(outcome.text).toContain(TRUNCATED_ANSWER_NOTE);
    });
  });

  describe('answer review', () => {
    it('sends one correction to the model, then delivers the next answer', async () => {
      const delegate = new ScriptedDelegate([text('I wrote notes.md.'), text('I did not write notes.md; here it is instead.')]);
      delegate.reviews = ['You said you wrote notes.md, but nothing wrote it.', 'a second correction is never asked for'];
      const ctx = context();
      const outcome = await runAgenticLoop(delegate, ctx);
      expect(outcome).toEqual({ type: 'response', text: 'I did not write notes.md; here it is instead.' });
      expect(count(ctx, 'You said you wrote notes.md, but nothing wrote it.')).toBe(1);
      expect(delegate.reviews).toHaveLength(1);
    });
  });

  describe('loop detectors', () => {
    const detectors = { ...DEFAULT_LOOP_GUARDS };

    it('tells the model about an A,B,A,B cycle, then hands a continuing loop to the delegate', async () => {
      const a: [string, Record<string, unknown>] = ['search', { q: 'alpha' }];
      const b: [string, Record<string, unknown>] = ['fetch', { url: 'https://example.com/b' }];
      const delegate = new ScriptedDelegate([calls([a]), calls([b]), calls([a]), calls([b]), calls([a]), calls([b]), calls([a]), calls([b]), text('never')]);
      const ctx = context();
      const outcome = await runAgenticLoop(delegate, ctx, { detectors });
      expect(outcome).toEqual({ type: 'need_approval', pending: 'loop: cycle' });
      expect(delegate.loops[0]?.summary).toMatch(/search/);
      // The model was told first.
      const notes = ctx.messages.filter((m) => m.role === 'user' && m.content !== 'sys');
      expect(notes.length).toBeGreaterThanOrEqual(1);
    });

    it('leaves identical failing batches to the warning and forced text: no question', async () => {
      const fail = () => calls([['nosuch', { q: 'same' }]]);
      const delegate = new ScriptedDelegate([fail(), fail(), fail(), fail(), text('I cannot do that here.')]);
      delegate.failing.add('nosuch');
      const ctx = context();
      expect(await runAgenticLoop(delegate, ctx, { detectors })).toEqual({ type: 'response', text: 'I cannot do that here.' });
      expect(delegate.loops).toEqual([]);
      expect(count(ctx, REPEATED_FAILURE_NOTICE)).toBe(3);
      expect(delegate.forceTextAtCall).toEqual([false, false, false, false, true]);
    });

    it('asks when forced text did not end the failing repetition', async () => {
      const fail = () => calls([['nosuch', { q: 'same' }]]);
      // Like a job: the forced text reply is not the end, and the model goes back to the same call.
      const delegate = new ScriptedDelegate([fail(), fail(), fail(), fail(), text('continue: I will try again.'), fail(), text('never')]);
      delegate.failing.add('nosuch');
      const outcome = await runAgenticLoop(delegate, context(), { detectors });
      expect(outcome).toEqual({ type: 'need_approval', pending: 'loop: failures' });
      expect(delegate.executed).toHaveLength(5);
      // The tools came back after the text reply.
      expect(delegate.forceTextAtCall).toEqual([false, false, false, false, true, false]);
    });

    it('stays quiet for calls that differ', async () => {
      const script = Array.from({ length: 8 }, (_, i) => calls([['search', { q: `topic ${i}` }]]));
      const delegate = new ScriptedDelegate([...script, text('done')]);
      const ctx = context();
      expect(await runAgenticLoop(delegate, ctx, { detectors })).toEqual({ type: 'response', text: 'done' });
      expect(ctx.messages.filter((m) => m.role === 'user')).toHaveLength(0);
      expect(delegate.loops).toHaveLength(0);
    });

    it('ends in a failure naming the loop when the delegate has no reaction', async () => {
      const delegate = new ScriptedDelegate(Array.from({ length: 10 }, () => calls([['search', { q: 'same' }]])));
      const bare: LoopDelegate<string> = {
        callLlm: (ctx, i) => delegate.callLlm(ctx, i),
        handleTextResponse: (t) => delegate.handleTextResponse(t),
        executeToolCalls: (c, content, ctx) => delegate.executeToolCalls(c, content, ctx),
      };
      const outcome = await runAgenticLoop(bare, context(), { detectors });
      expect(outcome.type).toBe('failure');
      if (outcome.type === 'failure') expect(outcome.reason).toMatch(/search/);
    });
  });

  it('ends with Stopped on a stop signal before calling the model', async () => {
    const delegate = new ScriptedDelegate([text('never')]);
    delegate.signals = [{ type: 'stop' }];
    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'stopped' });
    expect(delegate.forceTextAtCall).toHaveLength(0);
  });

  it('injects messages from signals before the model call', async () => {
    const delegate = new ScriptedDelegate([calls([['search', {}]]), text('both answered')]);
    delegate.signals = [{ type: 'continue' }, { type: 'inject', messages: [{ role: 'user', content: 'and also this' }] }];
    const ctx = context();
    await runAgenticLoop(delegate, ctx);
    const injected = ctx.messages.findIndex((m) => m.role === 'user' && m.content === 'and also this');
    const toolResult = ctx.messages.findIndex((m) => m.role === 'tool');
    expect(injected).toBeGreaterThan(toolResult);
  });

  it('ends with MaxIterations at the cap', async () => {
    const delegate = new ScriptedDelegate(Array.from({ length: 10 }, (_, i) => calls([['search', { i }]])));
    expect(await runAgenticLoop(delegate, context(), { maxIterations: 3 })).toEqual({ type: 'max_iterations' });
    expect(delegate.executed).toHaveLength(3);
  });

  it('ends early with the outcome of beforeLlmCall', async () => {
    const delegate = new ScriptedDelegate([text('never')]);
    delegate.early = { type: 'failure', reason: 'cost_limit' };
    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'failure', reason: 'cost_limit' });
  });

  it('ends with the outcome of executeToolCalls (an approval)', async () => {
    const delegate = new ScriptedDelegate([calls([['search', {}]])]);
    delegate.outcomeOnExecute = { type: 'need_approval', pending: 'approval-1' };
    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'need_approval', pending: 'approval-1' });
  });

  it('propagates an LLM error', async () => {
    const delegate = new ScriptedDelegate([]);
    delegate.error = new LlmError('boom', 'server', true, 500);
    await expect(runAgenticLoop(delegate, context())).rejects.toThrow('boom');
  });

  it('turns an error during a stopped run into Stopped', async () => {
    const delegate = new ScriptedDelegate([]);
    delegate.error = new LlmError('aborted', 'aborted', false);
    delegate.stopped = true;
    expect(await runAgenticLoop(delegate, context())).toEqual({ type: 'stopped' });
  });
});
