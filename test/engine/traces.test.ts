/**
 * Traces (SPEC section 18): a chat turn's model calls, tool calls and
 * deliveries, the wait for an approval, a job's steps and a routine's firing
 * are recorded as timed spans, kept in the store for `console.traceDays`,
 * listed newest first per thread and for the whole bot, and gone afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentEvents } from '../../src/engine/events.js';
import { TraceArchive } from '../../src/engine/traces/archive.js';
import { TraceRecorder } from '../../src/engine/traces/recorder.js';
import type { Trace } from '../../src/engine/traces/types.js';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';
import { textReply, toolCallReply, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';

const DAY = 24 * 3_600_000;
let dirs: string[] = [];
let stores: Store[] = [];
let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  await Promise.all(stores.map((store) => store.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
  stores = [];
});

async function openStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-traces-'));
  dirs.push(dir);
  const store = await Store.open({ dataDir: dir });
  stores.push(store);
  return store;
}

function trace(id: string, thread: string, startedAt: number, extra: Partial<Trace> = {}): Trace {
  return {
    id,
    kind: 'turn',
    thread,
    startedAt,
    durationMs: 1_200,
    outcome: 'response',
    spans: [{ kind: 'model', name: 'm', startedAt, durationMs: 900, attributes: { inputTokens: 100, outputTokens: 20, costUsd: 0.5 } }],
    ...extra,
  };
}

describe('the trace archive', () => {
  it('lists the newest first, per thread and for the whole bot, with each trace whole by its id', async () => {
    const store = await openStore();
    const now = Date.UTC(2026, 10, 28, 12, 30);
    const archive = new TraceArchive(store, { days: 3, log: silentLogger, now: () => now });
    archive.keep(trace('t1', 'test:a', now - 2 * 3_600_000));
    archive.keep(trace('t2', 'test:b', now - 60_000));
    archive.keep(trace('t3', 'test:a', now - 1_000));
    await archive.flush();
    expect((await archive.recent({ thread: 'test:a' })).map((summary) => summary.id)).toEqual(['t3', 't1']);
    expect((await archive.recent()).map((summary) => summary.id)).toEqual(['t3', 't2', 't1']);
    expect((await archive.recent({ limit: 2 })).map((summary) => summary.id)).toEqual(['t3', 't2']);
    const [summary] = await archive.recent({ thread: 'test:b' });
    expect(summary).toMatchObject({ id: 't2', spanCount: 1, inputTokens: 100, outputTokens: 20, costUsd: 0.5 });
    expect(summary).not.toHaveProperty('spans');
    expect((await archive.get('t2'))?.spans).toHaveLength(1);
  });

  it('keeps a trace for the configured days, then deletes it (a store without expiry included)', async () => {
    const store = await openStore();
    let now = Date.UTC(2026, 10, 28, 12, 30);
    const archive = new TraceArchive(store, { days: 1, log: silentLogger, now: () => now });
    archive.keep(trace('old', 'test:a', now));
    await archive.flush();
    now += DAY - 60_000;
    expect(await archive.get('old')).toBeDefined();
    now += 3 * 3_600_000;
    expect(await archive.get('old')).toBeUndefined();
    expect(await archive.recent()).toEqual([]);
    // A later write deletes the hours past the kept day: the record is gone even for a reader of the old days.
    archive.keep(trace('new', 'test:a', now));
    await archive.flush();
    const before = new TraceArchive(store, { days: 1, log: silentLogger, now: () => Date.UTC(2026, 10, 28, 12, 31) });
    expect(await before.get('old')).toBeUndefined();
    expect(await before.get('new')).toBeDefined();
  });

  it('keeps nothing with traceDays 0', async () => {
    const store = await openStore();
    const archive = new TraceArchive(store, { days: 0, log: silentLogger });
    archive.keep(trace('t1', 'test:a', Date.now()));
    await archive.flush();
    expect(await archive.get('t1')).toBeUndefined();
    expect(await archive.recent()).toEqual([]);
  });
});

describe('the trace recorder', () => {
  it("builds a job's steps from its model calls, each with the tool calls that followed it", async () => {
    const store = await openStore();
    const events = new AgentEvents();
    const recorder = new TraceRecorder(events, new TraceArchive(store, { days: 3, log: silentLogger }), { log: silentLogger });
    const finished: Trace[] = [];
    recorder.onTrace((done) => finished.push(done));
    const thread = 'job:j1';
    events.emit('job.run', { thread, userId: 'test:owner', phase: 'started' });
    events.emit('model.request', { thread, model: 'm', purpose: 'job_step', durationMs: 5, inputTokens: 10, outputTokens: 2 });
    events.emit('tool.call', { thread, tool: 'calculator', status: 'ok', durationMs: 1 });
    events.emit('tool.call', { thread: 'test:other', tool: 'shell', status: 'ok', durationMs: 1 });
    events.emit('model.request', { thread, model: 'm', purpose: 'job_step', durationMs: 5, inputTokens: 12, outputTokens: 3 });
    events.emit('job.run', { thread, userId: 'test:owner', phase: 'ended', outcome: 'ok' });
    expect(finished.map((step) => [step.kind, step.thread, step.spans.map((span) => `${span.kind}:${span.name}`)])).toEqual([
      ['job_step', thread, ['model:m', 'tool:calculator']],
      ['job_step', thread, ['model:m']],
    ]);
    await recorder.close();
    expect(await recorder.recent({ thread })).toHaveLength(2);
  });

  it('records a routine firing as one trace', async () => {
    const store = await openStore();
    const events = new AgentEvents();
    const recorder = new TraceRecorder(events, new TraceArchive(store, { days: 3, log: silentLogger }), { log: silentLogger });
    events.emit('routine.fired', { routine: 'r1', thread: 'test:a', userId: 'test:owner', startedAt: Date.now() - 20, durationMs: 20, result: 'started job j9', jobId: 'j9' });
    await recorder.close();
    const [summary] = await recorder.recent({ thread: 'test:a' });
    expect(summary).toMatchObject({ kind: 'routine', outcome: 'started job j9', spanCount: 1 });
    expect((await recorder.get(summary!.id))?.spans).toMatchObject([{ kind: 'job', name: 'job j9' }]);
  });
});

describe('traces of chat turns, through the app', () => {
  const owner = { id: 'owner', name: 'Ada' };
  const dm = testDm(owner.id);

  it('records the model calls, the tool call and the delivery of a turn, and the wait for an approval in the turn it resumed', async () => {
    const tools = new ToolLog();
    const responder = (request: FakeLlmRequest) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return textReply(`done: ${String(last.content)}`);
      return String(last.content).includes('danger') ? toolCallReply([{ name: 'danger', arguments: { target: 'staging' } }]) : toolCallReply([{ name: 'slow', arguments: { ms: 20 } }]);
    };
    rig = await startAppRig({ responder, tools: scenarioTools(tools), config: { console: { enabled: true } } });
    const thread = 'test:dm-owner';
    const traces = rig.app.traces!;
    expect(traces).toBeDefined();
    const finished: Trace[] = [];
    traces.onTrace((done) => finished.push(done));

    rig.platform.channel.userMessage({ chat: dm, sender: owner, text: 'take your time' });
    const first = await rig.platform.waitFor(() => finished.find((done) => done.outcome === 'response'), 10_000, 'the first turn');
    expect(first).toMatchObject({ kind: 'turn', thread, userId: 'test:owner' });
    expect(first.spans.map((span) => `${span.kind}:${span.name}`)).toEqual(['model:fake-model', 'tool:slow', 'model:fake-model', 'delivery:send']);
    const [model, tool] = first.spans;
    expect(model!.attributes).toMatchObject({ purpose: 'reply' });
    expect(tool!.attributes).toEqual({ status: 'ok' });
    for (const span of first.spans) {
      expect(span.startedAt).toBeGreaterThanOrEqual(first.startedAt - 5);
      expect(span.startedAt + span.durationMs).toBeLessThanOrEqual(first.startedAt + first.durationMs + 5);
    }

    rig.platform.channel.userMessage({ chat: dm, sender: owner, text: 'run danger' });
    const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[0], 10_000, 'the approval prompt');
    await new Promise((resolve) => setTimeout(resolve, 50));
    rig.platform.channel.press(prompt.prompt.id, 'approve', owner);
    await rig.platform.waitFor(() => tools.dangers.length === 1 && finished.filter((done) => done.outcome === 'response').length === 2, 10_000, 'the approved call and its answer');
    const resumed = finished.filter((done) => done.outcome === 'response')[1]!;
    const wait = resumed.spans.find((span) => span.kind === 'approval');
    expect(wait).toMatchObject({ name: 'approval of danger', attributes: { answer: 'approved' } });
    expect(wait!.durationMs).toBeGreaterThanOrEqual(40);
    expect(resumed.spans.map((span) => span.kind)).toContain('tool');

    // Stored, and listed newest first.
    await until(async () => (await traces.recent({ thread })).length >= 2, 'the stored traces');
    const listed = await traces.recent({ thread });
    expect(listed[0]!.id).toBe(finished.at(-1)!.id);
    expect((await traces.get(first.id))?.spans).toHaveLength(4);
  });

  it('records nothing while the console is off', async () => {
    rig = await startAppRig();
    expect(rig.app.traces).toBeUndefined();
  });
});

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('traces exported through OpenTelemetry', () => {
  it('sends a turn to the OTLP endpoint as an invoke_agent span with its model and tool calls, after the GenAI conventions', async () => {
    const received: { name: string; parentSpanId?: string; spanId: string; attributes: Record<string, unknown> }[] = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces' && String(request.headers['content-type']).includes('json')) {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpBody;
          for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) for (const span of scope.spans) received.push({ ...span, attributes: Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]])) });
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    try {
      const responder = (request: FakeLlmRequest) => (request.messages.at(-1)!.role === 'tool' ? textReply('done', { usage: { prompt_tokens: 30, completion_tokens: 4 } }) : toolCallReply([{ name: 'slow', arguments: { ms: 5 } }]));
      rig = await startAppRig({ responder, tools: scenarioTools(new ToolLog()) });
      expect(rig.app.traces).toBeDefined();
      rig.platform.channel.userMessage({ chat: testDm('owner'), sender: { id: 'owner', name: 'Ada' }, text: 'go' });
      await rig.platform.waitFor(() => rig!.platform.messagesIn(testDm('owner')).some((sent) => sent.text === 'done'), 10_000, 'the answer');
      await rig.app.runtime.idle();
      await rig.stopApp();
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      collector.close();
    }
    const root = received.find((span) => span.name === 'invoke_agent pincer');
    expect(root?.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': 'test:dm-owner', 'pincer.outcome': 'response' });
    const children = received.filter((span) => span.parentSpanId === root!.spanId).map((span) => span.name);
    expect(children).toEqual(['chat fake-model', 'execute_tool slow', 'chat fake-model', 'send']);
    const answer = received.filter((span) => span.name === 'chat fake-model')[1]!;
    expect(answer.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'fake-model', 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 4 });
    expect(received.find((span) => span.name === 'execute_tool slow')?.attributes).toMatchObject({ 'gen_ai.tool.name': 'slow', 'pincer.tool.status': 'ok' });
  });
});

interface OtlpBody {
  resourceSpans: { scopeSpans: { spans: { name: string; spanId: string; parentSpanId?: string; attributes: { key: string; value: Record<string, unknown> }[] }[] }[] }[];
}
