/**
 * One side of bench/runtime, run in its own process so that its peak RSS is its
 * own: `baseline` (1,000 plain loops on the openai SDK) or `pincer` (the same
 * conversations through the test channel, runtime, ChatDelegate, engine and
 * provider). Prints one JSON line: wall time, RSS just before the threads
 * start and at its peak during them, and the process's peak RSS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { buildSystemPrompt } from '../src/chat/system-prompt.js';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { calculatorTool } from '../src/tools/builtin/calculator.js';
import type { Tool, ToolContext } from '../src/tools/types.js';
import { TestPlatform, testDm } from '../test/support/test-channel.js';

const [variant, llmUrl, threadsArg, iterationsArg] = process.argv.slice(2) as [string, string, string, string];
const THREADS = Number(threadsArg);
const ITERATIONS = Number(iterationsArg);
/** Peak RSS of the process so far, in KiB. */
const rssKb = () => process.resourceUsage().maxRSS;

/**
 * Runs the threads and reads RSS just before them and at its peak during them:
 * the process's recorded peak when they raised it, else the highest of samples
 * taken every 10 ms (start-up may have peaked higher than the threads did).
 */
async function duringThreads<T>(work: () => Promise<T>): Promise<T & { rssBeforeKb: number; rssPeakKb: number }> {
  const before = process.memoryUsage().rss / 1024;
  const loop = performance.eventLoopUtilization();
  const peakBefore = rssKb();
  let sampled = before;
  const sample = () => (sampled = Math.max(sampled, process.memoryUsage().rss / 1024));
  const timer = setInterval(sample, 10);
  // PINCER_BENCH_HEAP_SNAPSHOT=<folder>: a heap snapshot while every thread is in its conversation, to see what each holds.
  const snapshotDir = process.env.PINCER_BENCH_HEAP_SNAPSHOT;
  const snapshot = snapshotDir
    ? setTimeout(() => writeHeapSnapshot(join(snapshotDir, `${variant}.heapsnapshot`)), Number(process.env.PINCER_BENCH_HEAP_SNAPSHOT_MS ?? 250))
    : undefined;
  // PINCER_BENCH_ALLOCATIONS=<file>: a sampling profile of every allocation during the threads, garbage included.
  const allocations = process.env.PINCER_BENCH_ALLOCATIONS ? await startAllocationSampling() : undefined;
  // PINCER_BENCH_CPU_PROFILE=<file>: a CPU profile of the threads alone (start-up left out), for Chrome's DevTools.
  const cpu = process.env.PINCER_BENCH_CPU_PROFILE ? await startCpuProfile() : undefined;
  const result = await work();
  if (allocations) writeFileSync(process.env.PINCER_BENCH_ALLOCATIONS!, JSON.stringify(await allocations()));
  if (cpu) writeFileSync(process.env.PINCER_BENCH_CPU_PROFILE!, JSON.stringify(await cpu()));
  clearTimeout(snapshot);
  clearInterval(timer);
  sample();
  const peakAfter = rssKb();
  return { ...result, busyMs: performance.eventLoopUtilization(loop).active, rssBeforeKb: before, rssPeakKb: peakAfter > peakBefore ? peakAfter : sampled };
}

/** An inspector session's `post`, as a promise. */
function inspector(): { post: (method: string, params?: object) => Promise<unknown>; close: () => void } {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  return { post, close: () => session.disconnect() };
}

/** Starts V8's CPU profiler; the returned function stops it and gives the profile. */
async function startCpuProfile(): Promise<() => Promise<unknown>> {
  const { post, close } = inspector();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    close();
    return profile;
  };
}

/** Starts V8's sampling heap profiler over everything allocated, collected or not; the returned function stops it. */
async function startAllocationSampling(): Promise<() => Promise<unknown>> {
  const { post, close } = inspector();
  await post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return async () => {
    const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: unknown };
    close();
    return profile;
  };
}

/**
 * What pincer sends besides the conversation: its system prompt and the tool
 * definitions it offers in a DM (the built-in tools, the jobs' and routines'
 * tools and the bench's wait tool), taken from a built app so that the
 * baseline sends the same requests and the two sides differ only in what runs
 * around them.
 */
async function pincerRequestParts(): Promise<{ system: (thread: number) => string; tools: ChatCompletionTool[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-base-'));
  const config = parseConfig({ dataDir: dir, logLevel: 'silent', llm: { baseUrl: llmUrl, apiKey: 'bench', model: 'fake-model' } });
  const app = await createApp({ config, tools: [waitTool()], channels: [] });
  const definitions = await app.services.pipeline.definitions({ userId: 'test:u0', scope: 'global', approval: { kind: 'chat', chatKind: 'dm' } });
  await app.stop('measured what it offers');
  rmSync(dir, { recursive: true, force: true });
  const system = (thread: number) =>
    buildSystemPrompt({ agentName: 'pincer', extra: '', chat: testDm(`u${thread}`), speaker: { id: `u${thread}`, name: `User ${thread}` }, tools: definitions, selfCheck: config.agent.loopGuards.selfCheck, now: new Date() });
  return { system, tools: definitions.map((d) => ({ type: 'function' as const, function: d })) };
}

async function baseline(staggered: boolean) {
  const calculator = calculatorTool();
  const client = new OpenAI({ baseURL: llmUrl, apiKey: 'bench', maxRetries: 0, timeout: 600_000 });
  const { system, tools } = await pincerRequestParts();
  /** One conversation; `wait` runs the wait tool until `signal` aborts it, which ends the loop. */
  const loop = async (thread: number, text = `iterations=${ITERATIONS} thread=${thread}`, signal?: AbortSignal, toolStarted?: () => void) => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: system(thread) },
      { role: 'user', content: text },
    ];
    for (;;) {
      const completion = await client.chat.completions.create({ model: 'fake-model', messages, tools, max_tokens: 4096 });
      const message = completion.choices[0]!.message;
      if (!message.tool_calls?.length) return;
      messages.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls });
      for (const call of message.tool_calls) {
        if (call.type !== 'function') continue;
        const args = JSON.parse(call.function.arguments) as { expression?: string; ms?: number };
        if (call.function.name === 'wait') {
          toolStarted?.();
          if (await waitAborted(args.ms ?? 0, signal)) return;
        }
        // The same tool's work as pincer's (the calculator evaluates the expression), so that only what runs around it differs.
        const content = args.expression === undefined ? 'waited' : await calculator.execute({ expression: args.expression }, undefined as never);
        messages.push({ role: 'tool', tool_call_id: call.id, content: String(content) });
      }
    }
  };
  const threads = await duringThreads(async () => {
    const start = performance.now();
    if (staggered) {
      // Each loop starts one event-loop turn after the one before, as pincer's intake takes the messages one by one.
      const all: Promise<void>[] = [];
      for (let i = 0; i < THREADS; i++) {
        all.push(loop(i));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(all);
    } else await Promise.all(Array.from({ length: THREADS }, (_, i) => loop(i)));
    return { wallMs: performance.now() - start };
  });
  // The baseline of /stop: a plain loop whose running tool is aborted, timed from the abort to the loop's end.
  const stop = process.env.PINCER_BENCH_SKIP_STOP || staggered
    ? undefined
    : await latencies(async () => {
        const controller = new AbortController();
        let started!: () => void;
        const toolRunning = new Promise<void>((resolve) => (started = resolve));
        const ended = loop(THREADS, 'wait 60000', controller.signal, started);
        await toolRunning;
        await new Promise((resolve) => setTimeout(resolve, 20));
        const start = performance.now();
        controller.abort();
        await ended;
        return performance.now() - start;
      });
  return { ...threads, stop };
}

/** Waits `ms`; true when `signal` aborted the wait first. */
function waitAborted(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** 100 samples of `one`, one at a time: p50, p99 and the worst. */
async function latencies(one: () => Promise<number>) {
  const samples: number[] = [];
  for (let i = 0; i < 100; i++) samples.push(await one());
  samples.sort((a, b) => a - b);
  return { p50Ms: samples[Math.floor(samples.length * 0.5)]!, p99Ms: samples[Math.floor(samples.length * 0.99)]!, maxMs: samples.at(-1)! };
}

function waitTool(): Tool {
  const parameters = z.object({ ms: z.number() });
  return {
    name: 'wait',
    description: 'Waits.',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 600_000,
    execute: (params: { ms: number }, ctx: ToolContext) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => resolve('waited'), params.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      }),
  } as unknown as Tool;
}

async function pincer() {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-'));
  const platform = new TestPlatform();
  const config = parseConfig({
    dataDir: dir,
    ...(process.env.PINCER_STORE_URL ? { storeUrl: process.env.PINCER_STORE_URL } : {}),
    logLevel: 'silent',
    llm: { baseUrl: llmUrl, apiKey: 'bench', model: 'fake-model', stream: false, maxRetries: 0, timeoutMs: 600_000 },
    agent: { maxConcurrentTurns: THREADS, maxToolIterations: ITERATIONS + 2, userMessagesPerMinute: 1000 },
  });
  const app = await createApp({ config, tools: [waitTool()], channels: [{ name: 'test', create: (deps) => platform.createChannel(deps) }] });
  await app.start();
  const threads = await duringThreads(async () => {
    const start = performance.now();
    for (let thread = 0; thread < THREADS; thread++) {
      const user = { id: `u${thread}`, name: `User ${thread}` };
      platform.channel.userMessage({ chat: testDm(user.id), sender: user, text: `iterations=${ITERATIONS} thread=${thread}` });
    }
    await platform.waitFor(() => platform.sent.length >= THREADS, 600_000, 'every thread answered');
    return { wallMs: performance.now() - start };
  });
  const stop = process.env.PINCER_BENCH_SKIP_STOP ? undefined : await stopLatencies(app, platform);
  await app.stop('bench over');
  rmSync(dir, { recursive: true, force: true });
  return { ...threads, stop };
}

/** /stop during a running tool: time from the command to the turn having ended. */
async function stopLatencies(app: Awaited<ReturnType<typeof createApp>>, platform: TestPlatform) {
  let i = 0;
  return latencies(async () => {
    i += 1;
    const user = { id: `s${i}`, name: `Stopper ${i}` };
    const chat = testDm(user.id);
    platform.channel.userMessage({ chat, sender: user, text: 'wait 60000' });
    const key = `test:${chat.chatId}`;
    await platform.waitFor(() => Boolean(app.runtime.runner(key)?.running?.iteration), 10_000, 'the tool to run');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const runner = app.runtime.runner(key)!;
    const start = performance.now();
    platform.channel.command({ chat, sender: user, name: 'stop' });
    await runner.idle();
    return performance.now() - start;
  });
}

const result = variant === 'pincer' ? await pincer() : await baseline(variant === 'baseline-staggered');
process.stdout.write(`${JSON.stringify({ variant, ...result, peakRssKb: rssKb() })}\n`);
process.exit(0);
