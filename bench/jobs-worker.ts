/**
 * One side of bench/jobs, run in its own process so that its RSS is its own:
 * `baseline` (plain loops on the openai SDK, one per job, making the requests
 * pincer's first job request starts with and appending the same steps) or
 * `pincer` (background jobs through the real app: scheduler, workers, job
 * delegate, pipeline, SQLite store). pincer's side learns that every job is
 * over from the jobs' final messages reaching its channel, not by reading job
 * records. Prints one JSON line: wall time, RSS just before the jobs and at
 * its peak during them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { CountingChannel } from './counting-channel.js';

const [variant, llmUrl, jobsArg, stepsArg, templateFile] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const JOBS = Number(jobsArg);
const STEPS = Number(stepsArg);
/** What the goal of a warm-up job says: the fake model ends it after two steps. */
const WARM_UP = 'warm up';

/** The first request of a job as pincer sent it: the baseline starts each loop with it. */
export interface JobRequestTemplate {
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  max_tokens?: number;
}

/** Runs `work` and reads RSS just before it and the highest of samples taken every 10 ms during it. */
async function measured(work: () => Promise<void>): Promise<{ wallMs: number; busyMs: number; rssBeforeKb: number; rssPeakKb: number }> {
  const before = process.memoryUsage().rss / 1024;
  const loop = performance.eventLoopUtilization();
  let peak = before;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().rss / 1024));
  const timer = setInterval(sample, 10);
  const start = performance.now();
  await work();
  const wallMs = performance.now() - start;
  const busyMs = performance.eventLoopUtilization(loop).active;
  clearInterval(timer);
  sample();
  return { wallMs, busyMs, rssBeforeKb: before, rssPeakKb: peak };
}

/** What the calculator answers for the fake model's `n+1`. */
function calculate(args: string): string {
  const { expression } = JSON.parse(args) as { expression: string };
  const [a, b] = expression.split('+').map(Number);
  return String(a! + b!);
}

async function baseline() {
  const template = JSON.parse(readFileSync(templateFile!, 'utf8')) as JobRequestTemplate;
  const client = new OpenAI({ baseURL: llmUrl, apiKey: 'bench', maxRetries: 0, timeout: 600_000 });
  const loop = async (warmUp = false) => {
    const messages: ChatCompletionMessageParam[] = structuredClone(template.messages);
    if (warmUp) messages.push({ role: 'user', content: WARM_UP });
    for (;;) {
      const completion = await client.chat.completions.create({ model: 'fake-model', messages, tools: template.tools, max_tokens: template.max_tokens });
      const message = completion.choices[0]!.message;
      if (!message.tool_calls?.length) return;
      messages.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls });
      for (const call of message.tool_calls) {
        if (call.type === 'function') messages.push({ role: 'tool', tool_call_id: call.id, content: calculate(call.function.arguments) });
      }
    }
  };
  await loop(true);
  return measured(async () => {
    await Promise.all(Array.from({ length: JOBS }, () => loop()));
  });
}

async function pincer() {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-jobs-'));
  // A job's last message: "✅ Job <id> "<title>" is done." (or failed, or cancelled).
  const channel = new CountingChannel((text) => /^\S+ Job \S+ ".*" (?:is done|failed|was cancelled)/.test(text));
  const config = parseConfig({
    dataDir: dir,
    logLevel: 'silent',
    terminal: { enabled: 'off' },
    owners: ['bench:owner'],
    llm: { baseUrl: llmUrl, apiKey: 'bench', model: 'fake-model', maxRetries: 0, stream: false, timeoutMs: 600_000 },
    jobs: { maxParallel: JOBS, maxActivePerUser: JOBS + 1, maxIterations: STEPS + 5, maxIterationsLimit: 500 },
  });
  const app = await createApp({ config, channels: [{ name: 'bench', create: () => channel }] });
  await app.start();
  const job = (title: string, goal: string) =>
    app.jobs.scheduler.create({
      title,
      goal,
      owner: 'bench:owner',
      ownerName: 'Owner',
      origin: { channel: 'bench', chatId: 'dm-owner', kind: 'dm', scope: 'global' },
      tools: ['calculator'],
      plan: false,
      maxIterations: STEPS + 5,
      timeoutMs: 600_000,
    });
  await job('warm-up', WARM_UP);
  await channel.reached(1);
  const result = await measured(async () => {
    await Promise.all(Array.from({ length: JOBS }, (_, i) => job(`count ${i}`, 'count to nine')));
    await channel.reached(JOBS + 1);
  });
  // Read once the run is over, outside the measured span.
  const jobs = await app.services.jobs.list({ states: ['completed', 'failed', 'cancelled'] });
  const failed = jobs.filter((record) => record.state !== 'completed').length;
  await app.stop('bench over');
  rmSync(dir, { recursive: true, force: true });
  if (failed) throw new Error(`${failed} of ${JOBS} jobs did not complete: ${jobs.find((record) => record.state !== 'completed')?.result}`);
  return result;
}

const result = variant === 'baseline' ? await baseline() : await pincer();
process.stdout.write(`${JSON.stringify({ variant, ...result })}\n`);
process.exit(0);
