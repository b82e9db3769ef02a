/**
 * The measured side of bench/soak, in its own process so that its memory is
 * its own: the app on SQLite with a bare channel that keeps nothing, fed for
 * `minutes` with mixed traffic: chat turns with a tool call, turns whose
 * `files_write` asks for approval (approved at once), 50 routines firing
 * every 30 s (45 plain reminders, 5 that start a job through the model) and
 * two jobs created every 30 s. Every 10 s, after a forced garbage collection
 * (run with --expose-gc), it samples RSS and heap used; it writes a heap
 * snapshot at `snapshotMinute` and at the end. Prints one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { createApp } from '../src/app.js';
import { EventQueue } from '../src/channels/event-queue.js';
import type { ApprovalPrompt, Channel, ChannelCapabilities, ChatAddress, ChatInfo, InboundEvent, SentMessage } from '../src/channels/types.js';
import { parseConfig } from '../src/config/load.js';
import type { JobRequest } from '../src/jobs/job.js';
import type { Routine } from '../src/routines/routine.js';

const [llmUrl, minutesArg, snapshotArg, outDir, contextArg, usersArg] = process.argv.slice(2) as [string, string, string, string, string, string];
const MINUTES = Number(minutesArg);
const SNAPSHOT_MINUTE = Number(snapshotArg);
/** `agent.maxContextTokens`, 0 for the default: a small one makes compaction level the histories off within the run. */
const MAX_CONTEXT_TOKENS = Number(contextArg);
/** People, each with a DM: the conversations the 5 messages a second are spread over. */
const USERS = Number(usersArg);
const SAMPLE_MS = 10_000;
const gc = (globalThis as { gc?: () => void }).gc;

/** A DM of user `n`. */
const dm = (n: number): ChatInfo => ({ channel: 'soak', chatId: `dm-u${n}`, kind: 'dm', scope: 'global' });

/** A channel that keeps nothing of what it sends, and approves every approval prompt at once as the person of the chat. */
class SoakChannel implements Channel {
  readonly name = 'soak';
  readonly capabilities: ChannelCapabilities = { maxMessageLength: 4000, minEditIntervalMs: 1000, typingIntervalMs: 0 };
  sent = 0;
  approvals = 0;
  private readonly queue = new EventQueue<InboundEvent>();

  async start(): Promise<void> {}
  async stop(): Promise<void> {
    this.queue.close();
  }
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }
  async send(chat: ChatAddress): Promise<SentMessage> {
    this.sent += 1;
    return { chat, ids: [String(this.sent)] };
  }
  async edit(message: SentMessage): Promise<SentMessage> {
    return message;
  }
  async typing(): Promise<void> {}
  async sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    this.approvals += 1;
    const user = chat.chatId.replace(/^dm-/, '');
    setTimeout(() => {
      if (this.queue.isClosed) return;
      this.queue.push({ type: 'approval', chat: { ...chat, kind: 'dm', scope: 'global' }, sender: { id: user, name: user }, receivedAt: Date.now(), approvalId: prompt.id, action: 'approve', respond: async () => undefined });
    }, 50).unref();
    return { chat, ids: [`p${this.approvals}`] };
  }
  async resolveApproval(): Promise<void> {}
  async isAdmin(): Promise<boolean> {
    return false;
  }

  write(n: number, text: string, seq: number): void {
    this.queue.push({ type: 'message', chat: dm(n), sender: { id: `u${n}`, name: `User ${n}` }, receivedAt: Date.now(), messageId: `m${n}-${seq}`, text, mentionsBot: true, replyToBot: false, attachments: [] });
  }
}

const dir = mkdtempSync(join(tmpdir(), 'pincer-soak-'));
const config = parseConfig({
  dataDir: dir,
  logLevel: 'silent',
  owners: Array.from({ length: USERS }, (_, n) => `soak:u${n}`),
  llm: { baseUrl: llmUrl, apiKey: 'soak', model: 'fake-model', stream: false, maxRetries: 0 },
  agent: { maxConcurrentTurns: 64, userMessagesPerMinute: 1000, ...(MAX_CONTEXT_TOKENS ? { maxContextTokens: MAX_CONTEXT_TOKENS } : {}) },
  routines: { minIntervalSeconds: 30, maxPerUser: 100 },
  jobs: { maxActivePerUser: 50, maxParallel: 8 },
});
const channel = new SoakChannel();
const app = await createApp({ config, channels: [{ name: 'soak', create: () => channel }] });
await app.start();
let compactions = 0;
app.services.events.on('compaction', () => (compactions += 1));

const now = Date.now();
for (let i = 0; i < 50; i += 1) {
  const owner = i % USERS;
  const first = now + 5_000 + i * 500;
  const routine: Routine = {
    id: `rsoak${String(i).padStart(4, '0')}`,
    name: `routine ${i}`,
    owner: `soak:u${owner}`,
    ownerName: `User ${owner}`,
    origin: dm(owner),
    schedule: { kind: 'every', everyMs: 30_000, from: first },
    timezone: 'UTC',
    action: i < 45 ? { kind: 'message', text: `reminder ${i}` } : { kind: 'prompt', prompt: '[job] count for the routine' },
    tools: i < 45 ? [] : ['calculator'],
    enabled: true,
    nextAt: first,
    skipped: [],
    createdAt: now,
  };
  await app.routines.scheduler.add(routine);
}

const samples: { t: number; rssMb: number; heapMb: number; heapTotalMb: number; externalMb: number }[] = [];
const sample = () => {
  gc?.();
  const usage = process.memoryUsage();
  samples.push({ t: Date.now(), rssMb: usage.rss / 2 ** 20, heapMb: usage.heapUsed / 2 ** 20, heapTotalMb: usage.heapTotal / 2 ** 20, externalMb: (usage.external + usage.arrayBuffers) / 2 ** 20 });
};
const snapshots: string[] = [];
/** When the first snapshot was written: writing one raises RSS once (native memory the allocator keeps), so the slopes leave it out. */
let snapshotAt = 0;
const snapshot = (name: string) => {
  gc?.();
  snapshotAt ||= Date.now();
  snapshots.push(writeHeapSnapshot(join(outDir, `${name}.heapsnapshot`)));
};

const start = Date.now();
const end = start + MINUTES * 60_000;
let seq = 0;
let jobs = 0;
const kinds = ['[calc] what is 2 + 2', '[write] note this down', '[chat] hello'];
const traffic = setInterval(() => {
  for (let k = 0; k < 5; k += 1) {
    seq += 1;
    channel.write(seq % USERS, kinds[seq % kinds.length]!, seq);
  }
}, 1_000);
const jobTimer = setInterval(() => {
  for (let k = 0; k < 2; k += 1) {
    jobs += 1;
    const owner = jobs % USERS;
    const request: JobRequest = {
      title: `soak job ${jobs}`,
      goal: '[job] count to three',
      owner: `soak:u${owner}`,
      ownerName: `User ${owner}`,
      origin: { channel: 'soak', chatId: `dm-u${owner}`, kind: 'dm', scope: 'global' },
      tools: ['calculator'],
      plan: false,
      maxIterations: 10,
      timeoutMs: 60_000,
    };
    void app.jobs.scheduler.create(request).catch(() => undefined);
  }
}, 30_000);
sample();
let snapped = false;
while (Date.now() < end) {
  await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
  sample();
  if (!snapped && Date.now() - start >= SNAPSHOT_MINUTE * 60_000) {
    snapped = true;
    snapshot('early');
  }
}
clearInterval(traffic);
clearInterval(jobTimer);
snapshot('late');
const completed = (await app.jobs.store.list({ states: ['completed'] })).length;
// The conversations' lengths at the end: what the histories hold in memory.
const lengths: number[] = [];
for (let n = 0; n < USERS; n += 1) lengths.push((await app.services.history.get(`soak:dm-u${n}`))?.messages.length ?? 0);
await app.stop('soak over');
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ start, snapshotAt, samples, snapshots, messages: seq, sent: channel.sent, approvals: channel.approvals, jobsCreated: jobs, jobsCompleted: completed, compactions, historyMessages: { mean: lengths.reduce((sum, length) => sum + length, 0) / USERS, max: Math.max(...lengths) }, gc: Boolean(gc) })}\n`);
process.exit(0);
