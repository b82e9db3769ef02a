/**
 * bench/loop-overhead: the cost of pincer's engine over a plain loop.
 *
 * The same scripted conversation runs (a) as a plain loop written directly on
 * the openai SDK and (b) through runAgenticLoop with a minimal delegate (the
 * OpenAiProvider and one trivial tool), against the same fake server in the same
 * process. Reported: wall time of each and the overhead per iteration of (b)
 * over (a), for 1 agent x 200 iterations and 200 agents x 10 iterations.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { runAgenticLoop, type LoopContext, type LoopDelegate } from '../src/engine/loop.js';
import { LlmConfigSchema } from '../src/config/schema.js';
import { OpenAiProvider } from '../src/llm/openai-provider.js';
import type { ToolCall } from '../src/llm/types.js';
import { DEFAULT_LOOP_GUARDS } from '../src/config/schema.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlmRequest } from '../test/fakes/llm/server.js';

const TOOL = { name: 'add_one', description: 'Adds one to a number.', parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } };

/** The trivial tool both loops run. */
function addOne(args: string): string {
  const { n } = JSON.parse(args) as { n: number };
  return String(n + 1);
}

/** Tool calls until the conversation holds `target` tool results, then a text answer. */
function responder(request: FakeLlmRequest) {
  const target = Number(/iterations=(\d+)/.exec(String(request.messages[1]?.content))?.[1] ?? 10);
  const done = request.messages.filter((m) => m.role === 'tool').length;
  return done + 1 >= target ? textReply('done') : toolCallReply([{ id: `call_${done}`, name: 'add_one', arguments: { n: done } }]);
}

async function plainLoop(client: OpenAI, iterations: number): Promise<number> {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'bench' },
    { role: 'user', content: `iterations=${iterations}` },
  ];
  for (let i = 0; i < iterations; i++) {
    const completion = await client.chat.completions.create({
      model: 'fake-model',
      messages,
      tools: [{ type: 'function', function: TOOL }],
    });
    const message = completion.choices[0]!.message;
    if (!message.tool_calls?.length) return i + 1;
    messages.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls });
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      messages.push({ role: 'tool', tool_call_id: call.id, content: addOne(call.function.arguments) });
    }
  }
  return iterations;
}

async function engineLoop(provider: OpenAiProvider, iterations: number): Promise<number> {
  let count = 0;
  const delegate: LoopDelegate = {
    callLlm: (ctx) => {
      count += 1;
      return provider.complete({ messages: ctx.messages, tools: ctx.tools });
    },
    handleTextResponse: (text) => ({ action: 'return', outcome: { type: 'response', text } }),
    async executeToolCalls(calls: ToolCall[], content: string, ctx: LoopContext) {
      ctx.messages.push({ role: 'assistant', content: content || null, toolCalls: calls });
      for (const call of calls) ctx.messages.push({ role: 'tool', toolCallId: call.id, content: addOne(call.arguments) });
      return { allFailed: false, allSucceeded: true, calls: calls.map((call) => ({ name: call.name, arguments: call.arguments, ok: true })) };
    },
  };
  const ctx: LoopContext = {
    messages: [
      { role: 'system', content: 'bench' },
      { role: 'user', content: `iterations=${iterations}` },
    ],
    tools: [TOOL],
    forceText: false,
  };
  // Every guard runs as in a chat turn, the loop detectors included. They would (rightly) stop a
  // model repeating itself; the arguments differ each time here.
  await runAgenticLoop(delegate, ctx, { maxIterations: iterations + 1, detectors: DEFAULT_LOOP_GUARDS });
  return count;
}

async function timed(run: () => Promise<number>): Promise<{ ms: number; iterations: number }> {
  const start = performance.now();
  const iterations = await run();
  return { ms: performance.now() - start, iterations };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** One shape: `agents` loops of `iterations` each, run concurrently; rounds alternate (a) and (b). */
async function measure(agents: number, iterations: number, rounds: number, client: OpenAI, provider: OpenAiProvider) {
  const plain: number[] = [];
  const engine: number[] = [];
  let totalIterations = 0;
  for (let round = 0; round < rounds; round++) {
    const a = await timed(async () => (await Promise.all(Array.from({ length: agents }, () => plainLoop(client, iterations)))).reduce((x, y) => x + y, 0));
    const b = await timed(async () => (await Promise.all(Array.from({ length: agents }, () => engineLoop(provider, iterations)))).reduce((x, y) => x + y, 0));
    if (a.iterations !== b.iterations) throw new Error(`iteration counts differ: ${a.iterations} vs ${b.iterations}`);
    totalIterations = a.iterations;
    plain.push(a.ms);
    engine.push(b.ms);
  }
  const a = median(plain);
  const b = median(engine);
  return { shape: `${agents} x ${iterations}`, iterations: totalIterations, plainMs: a, engineMs: b, overheadPerIterationMs: (b - a) / totalIterations, ratio: b / a };
}

/**
 * Runs the benchmark and returns its rows. `rounds`: of every shape, or of
 * each (1 x 10, 1 x 200, 200 x 10) when three are given; one given is used for all.
 */
export async function runLoopOverhead(rounds: number[] = [5]) {
  const [short, long = short, wide = short] = rounds as [number, ...number[]];
  const llm = await startFakeLlm({ responder, record: false });
  const client = new OpenAI({ baseURL: llm.url, apiKey: 'bench', maxRetries: 0 });
  const provider = new OpenAiProvider(LlmConfigSchema.parse({ baseUrl: llm.url, apiKey: 'bench', model: 'fake-model', maxRetries: 0 }));
  try {
    await measure(5, 10, 1, client, provider); // warm-up
    return [await measure(1, 10, short, client, provider), await measure(1, 200, long, client, provider), await measure(200, 10, wide, client, provider)];
  } finally {
    await llm.close();
  }
}
