/**
 * bench/soak: whether memory stays flat over time. The app runs for
 * PINCER_SOAK_MINUTES (default 10) under mixed traffic (bench/soak-worker.ts:
 * chat turns with tools, approvals, 50 routines firing every 30 s, jobs),
 * against the fake model in this process answering after 50 ms. After the
 * warm-up (a fifth of the run, 2 minutes of 10) the slopes of RSS and of heap
 * used, sampled every 10 s after a forced collection, are fitted by least
 * squares and given in MB per hour; heap snapshots taken at 30% of the run
 * (minute 3 of 10) and at its end are compared by constructor (what grew)
 * and by the older object holding what is new (bench/heap-diff.ts).
 *
 * Two variants, labelled as such in the output: a smaller `agent.maxContextTokens`
 * (the default is 32,000, which the 20 conversations reach only after about 40
 * minutes) makes compaction shorten each history every few minutes, so the run
 * shows the steady state; more conversations spread the same traffic over
 * many threads of a few turns each, so what is kept per thread shows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { byConstructor, newObjectsByHolder, type HeapTotal } from './heap-diff.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlmRequest } from '../test/fakes/llm/server.js';

const run = promisify(execFile);
const LATENCY_MS = 50;
/** The longest request the model was sent (by messages): its characters, its system prompt's. */
const largest = { messages: 0, chars: 0, system: 0 };

type Row = Record<string, number | string>;

interface WorkerResult {
  start: number;
  snapshotAt: number;
  samples: { t: number; rssMb: number; heapMb: number; heapTotalMb: number; externalMb: number }[];
  snapshots: string[];
  messages: number;
  sent: number;
  approvals: number;
  jobsCreated: number;
  jobsCompleted: number;
  compactions: number;
  historyMessages: { mean: number; max: number };
  gc: boolean;
}

/** The model: a chat turn calls the calculator or files_write once, then answers; a job counts three steps, then reports done; a compaction's summary request gets a short summary. */
function responder(request: FakeLlmRequest) {
  const first = request.messages[0]?.content;
  const chars = request.messages.reduce((sum, message) => sum + (typeof message.content === 'string' ? message.content.length : 0), 0);
  if (request.messages.length > largest.messages) Object.assign(largest, { messages: request.messages.length, chars, system: typeof first === 'string' ? first.length : 0 });
  if (typeof first === 'string' && first.startsWith('Summarise the conversation')) {
    return textReply('The user asked for sums (the calculator answered), notes written to note.txt, greetings and reminders; all were answered.', { latencyMs: LATENCY_MS });
  }
  const text = request.messages.map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');
  const tools = request.messages.filter((message) => message.role === 'tool').length;
  if (text.includes('[job]')) {
    return tools < 3 ? toolCallReply([{ name: 'calculator', arguments: { expression: `${tools} + 1` } }], { latencyMs: LATENCY_MS }) : textReply('DONE: counted to three', { latencyMs: LATENCY_MS });
  }
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply('Done.', { latencyMs: LATENCY_MS });
  const asked = String(last.content ?? '');
  if (asked.includes('[calc]')) return toolCallReply([{ name: 'calculator', arguments: { expression: '2 + 2' } }], { latencyMs: LATENCY_MS });
  if (asked.includes('[write]')) return toolCallReply([{ name: 'files_write', arguments: { path: 'note.txt', content: `noted at ${Date.now()}` } }], { latencyMs: LATENCY_MS });
  return textReply('Hello!', { latencyMs: LATENCY_MS });
}

/** Least-squares slope of `y` over `t` (ms), in units per hour. */
function slopePerHour(points: { t: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const meanT = points.reduce((sum, p) => sum + p.t, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - meanT) * (p.y - meanY);
    den += (p.t - meanT) ** 2;
  }
  return (num / den) * 3_600_000;
}

/** The least-squares slope shared by several series, each with a level of its own, in units per hour. */
function pooledSlopePerHour(groups: { t: number; y: number }[][]): number {
  let num = 0;
  let den = 0;
  for (const points of groups) {
    const meanT = points.reduce((sum, p) => sum + p.t, 0) / points.length;
    const meanY = points.reduce((sum, p) => sum + p.y, 0) / points.length;
    for (const p of points) {
      num += (p.t - meanT) * (p.y - meanY);
      den += (p.t - meanT) ** 2;
    }
  }
  return den ? (num / den) * 3_600_000 : NaN;
}

/**
 * Runs the soak; the rows are its figures, then the ten constructors that grew most between the
 * snapshots and the ten holders of most new objects. `maxContextTokens` (0: the default) and
 * `conversations` (20) make the variants, named in the first row.
 */
export async function runSoakBench(minutes = Number(process.env.PINCER_SOAK_MINUTES ?? 10), options: { maxContextTokens?: number; conversations?: number } = {}): Promise<Row[]> {
  const { maxContextTokens = 0, conversations = 20 } = options;
  const warmUpMs = minutes * 0.2 * 60_000;
  const snapshotMinute = minutes * 0.3;
  const llm = await startFakeLlm({ responder, record: false });
  const out = mkdtempSync(join(tmpdir(), 'pincer-soak-out-'));
  try {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/soak-worker.ts', llm.url, String(minutes), String(snapshotMinute), out, String(maxContextTokens), String(conversations)], {
      maxBuffer: 1 << 24,
      env: { ...process.env, NODE_OPTIONS: '' },
      timeout: (minutes + 5) * 60_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerResult;
    // After the warm-up, and leaving out the minute around the first heap snapshot: writing one
    // raises RSS by a step (memory the allocator keeps), which is the measurement's, not the program's.
    const steady = result.samples.filter((s) => s.t - result.start >= warmUpMs && (s.t < result.snapshotAt || s.t >= result.snapshotAt + 60_000));
    const after = steady.filter((s) => s.t >= result.snapshotAt + 60_000);
    const before = steady.filter((s) => s.t < result.snapshotAt);
    // One slope for the two stretches (before and after the snapshot), each with its own level.
    const pooled = (pick: (s: WorkerResult['samples'][number]) => number) => pooledSlopePerHour([before, after].filter((part) => part.length > 1).map((part) => part.map((s) => ({ t: s.t, y: pick(s) }))));
    const rss = pooled((s) => s.rssMb);
    const heap = pooled((s) => s.heapMb);
    const first = steady[0];
    const last = steady.at(-1);
    const variant = [maxContextTokens ? `VARIANT: agent.maxContextTokens ${maxContextTokens} (default 32,000), so that compaction levels the histories off` : '', conversations !== 20 ? `VARIANT: ${conversations} conversations (default 20)` : ''].filter(Boolean).join('; ');
    const rows: Row[] = [
      { measure: 'configuration', value: variant || 'default (20 conversations, agent.maxContextTokens 32,000)' },
      { measure: `RSS slope after ${(warmUpMs / 60_000).toFixed(1)} min, the snapshot's step left out (MB/h; goal <= 5)`, value: rss },
      { measure: 'heap used slope (MB/h)', value: heap },
      { measure: 'heap reserved (heapTotal) slope (MB/h)', value: pooled((s) => s.heapTotalMb) },
      { measure: 'external and array buffers slope (MB/h)', value: pooled((s) => s.externalMb) },
      { measure: `RSS slope from a minute after the first snapshot to the end (MB/h, ${after.length} samples)`, value: slopePerHour(after.map((s) => ({ t: s.t, y: s.rssMb }))) },
      { measure: 'RSS at the end of the warm-up / at the end (MB)', value: `${first?.rssMb.toFixed(1)} / ${last?.rssMb.toFixed(1)}` },
      { measure: 'heap used at the end of the warm-up / at the end (MB)', value: `${first?.heapMb.toFixed(1)} / ${last?.heapMb.toFixed(1)}` },
      { measure: 'messages / replies and edits sent / approvals / jobs created / jobs completed', value: `${result.messages} / ${result.sent} / ${result.approvals} / ${result.jobsCreated} / ${result.jobsCompleted}` },
      { measure: 'longest request: messages / characters / of which the system prompt', value: `${largest.messages} / ${largest.chars} / ${largest.system}` },
      { measure: 'compactions / messages in a conversation at the end (mean, max)', value: `${result.compactions} / ${result.historyMessages.mean.toFixed(0)}, ${result.historyMessages.max}` },
      { measure: 'RSS / heap reserved / heap used, each minute (MB)', value: result.samples.filter((_, i) => i % 6 === 0).map((s) => `${s.rssMb.toFixed(0)}/${s.heapTotalMb.toFixed(0)}/${s.heapMb.toFixed(0)}`).join(' ') },
      { measure: 'samples (every 10 s, after a forced GC)', value: `${result.samples.length}${result.gc ? '' : ' (no forced GC: --expose-gc missing)'}` },
    ];
    const [early, late] = result.snapshots.map(byConstructor) as [Map<string, HeapTotal>, Map<string, HeapTotal>];
    const growth = [...late].map(([key, entry]) => ({ key, bytes: entry.bytes - (early.get(key)?.bytes ?? 0), count: entry.count - (early.get(key)?.count ?? 0) }));
    growth.sort((a, b) => b.bytes - a.bytes);
    for (const grew of growth.slice(0, 10)) rows.push({ measure: `grew between minute ${snapshotMinute.toFixed(1)} and ${minutes}: ${grew.key}`, value: `${(grew.bytes / 1024).toFixed(1)} KiB, ${grew.count} objects` });
    const held = [...newObjectsByHolder(result.snapshots[0]!, result.snapshots[1]!)].sort((a, b) => b[1].bytes - a[1].bytes);
    for (const [holder, total] of held.slice(0, 10)) rows.push({ measure: `new since minute ${snapshotMinute.toFixed(1)}, held by: ${holder}`, value: `${(total.bytes / 1024).toFixed(1)} KiB, ${total.count} objects` });
    return rows;
  } finally {
    await llm.close();
    if (process.env.PINCER_SOAK_KEEP) console.log(`heap snapshots kept in ${out}`);
    else rmSync(out, { recursive: true, force: true });
  }
}
