/**
 * Two instances of the app on one Redis store, over one test platform: each
 * message is answered once, by whichever instance holds its thread, in order;
 * a group's messages from several people are read one person's at a time; a
 * policy change made on one instance reaches the other's next model call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { TestChannel } from '../support/test-channel.js';
import { TestPlatform, testDm, testGroup } from '../support/test-channel.js';
import { actingTool, actOnLatest, type Act } from '../support/acting-tool.js';
import type { Tool } from '../../src/tools/types.js';
import { echoAll, HeldModel } from '../support/app-rig.js';
import { createMetrics } from '../../src/http/server.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeResponder } from '../fakes/llm/server.js';
import { threadKeyOf } from '../../src/channels/types.js';
import { threadKeys } from '../../src/cluster/thread-storage.js';
import { SHUTDOWN_NOTICE } from '../../src/chat/turn-restart.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';
import { clusterOf } from '../../src/cluster/deployment.js';


/** Database 9 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url: redisUrl } = testRedisDb(9);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Instance {
  app: App;
  channel: TestChannel;
}

async function startInstance(platform: TestPlatform, llm: FakeLlm, id: string, agent: Record<string, unknown> = {}, tools: Tool[] = [], leaseTtlMs = 2_000): Promise<Instance> {
  // The approval test's fetch never runs (its question expires); the host is allowed so that it is asked.
  const dir = mkdtempSync(join(tmpdir(), `pincer-cluster-${id}-`));
  const config = parseConfig({
    dataDir: dir,
    storeUrl: redisUrl(),
    owners: ['test:owner'],
    cluster: { instanceId: id, leaseTtlMs },
    llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false },
    agent: { shutdownTimeoutMs: 3_000, ...agent },
    tools: { http: { allowHosts: ['127.0.0.1'] } },
  });
  let channel: TestChannel | undefined;
  const app = await createApp({ config, tools, channels: [{ name: 'test', create: (deps) => (channel = platform.createChannel(deps)) }] });
  await app.start();
  cleanups.push(async () => {
    await app.stop('test over');
    rmSync(dir, { recursive: true, force: true });
  });
  return { app, channel: channel! };
}

/** Two instances, a and b, on an emptied database, one test platform and one recording model. */
async function startPair(responder: FakeResponder = echoAll, agent: Record<string, unknown> = {}, tools: Tool[] = [], leaseTtlMs = 2_000): Promise<{ llm: FakeLlm; platform: TestPlatform; a: Instance; b: Instance }> {
  await flushDb(redisUrl());
  const llm = await startFakeLlm({ responder, record: true });
  cleanups.push(() => llm.close());
  const platform = new TestPlatform();
  return { llm, platform, a: await startInstance(platform, llm, 'a', agent, tools, leaseTtlMs), b: await startInstance(platform, llm, 'b', agent, tools, leaseTtlMs) };
}

async function waitFor(check: () => boolean | Promise<boolean>, what: () => string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!available)(`threads shared by two instances on Redis${skip}`, () => {
  it('keeps a message sent during a turn in the shared inbox only: the thread\'s record on Redis is not written for it', async () => {
    await flushDb(redisUrl());
    const held = new HeldModel();
    const llm = await startFakeLlm({ responder: held.respond, record: true });
    cleanups.push(() => llm.close());
    const platform = new TestPlatform();
    const solo = await startInstance(platform, llm, 'solo');
    const storage = solo.app.deployment.threadStorage;
    const write = storage.write.bind(storage);
    const writes: string[] = [];
    storage.write = (key, record, delta) => {
      writes.push(`${record.messages.length - delta.from} new, ${delta.consumed.length} read, turn ${record.turn?.phase ?? 'none'}`);
      return write(key, record, delta);
    };
    const dm = testDm('owner');
    const owner = { id: 'owner', name: 'Owner' };
    solo.channel.userMessage({ chat: dm, sender: owner, text: 'first' });
    await waitFor(() => held.waiting === 1, () => 'the first model call');
    await solo.app.services.history.flushThread(threadKeyOf(dm));
    const before = writes.length;
    solo.channel.userMessage({ chat: dm, sender: owner, text: 'second' });
    // The message is stored in the thread's shared inbox on Redis and handed to the runner; the thread's record is not written for it.
    const inbox = threadKeys(threadKeyOf(dm)).inbox;
    const redis = clusterOf(solo.app.deployment)!.node.redis;
    await waitFor(() => (solo.app.runtime.runner(threadKeyOf(dm))?.queuedMessages ?? 0) >= 1, () => 'the second message handed to the thread\'s runner');
    expect(await redis.llen(inbox)).toBe(1);
    await solo.app.services.history.flushThread(threadKeyOf(dm));
    expect(writes.slice(before)).toEqual([]);
    // From here every model call is answered at once: both messages are read, and the shared inbox empties.
    const releasing = setInterval(() => held.releaseAll(), 10);
    try {
      await waitFor(() => held.arrived.some((request) => JSON.stringify(request.messages).includes('second')), () => 'the second message read by the model');
      for (const end = Date.now() + 10_000; (await redis.llen(inbox)) > 0 && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 20));
      await solo.app.runtime.idle();
    } finally {
      clearInterval(releasing);
    }
    // Both messages were read, and the inbox is empty.
    expect(await redis.llen(inbox)).toBe(0);
  });

  it('answers every message once, in order, whichever instance received it', async () => {
    const { platform, a, b } = await startPair();
    const threads = 12;
    const perThread = 5;
    for (let m = 0; m < perThread; m += 1) {
      for (let t = 0; t < threads; t += 1) {
        const via = (t + m) % 2 === 0 ? a : b;
        via.channel.userMessage({ chat: testDm(`user-${t}`), sender: { id: `user-${t}`, name: `User ${t}` }, text: `t${t}-m${m}` });
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    const echoed = (t: number) =>
      platform
        .messagesIn(testDm(`user-${t}`))
        .flatMap((sent) => [...sent.text.matchAll(/t\d+-m\d+/g)].map((match) => match[0]));
    await waitFor(
      () => Array.from({ length: threads }, (_, t) => echoed(t).length).every((n) => n >= perThread),
      () => `every message echoed; got ${JSON.stringify(Array.from({ length: threads }, (_, t) => echoed(t)))}`,
    );
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    for (let t = 0; t < threads; t += 1) expect(echoed(t)).toEqual(Array.from({ length: perThread }, (_, m) => `t${t}-m${m}`));
  }, 60_000);

  it("reads a group's shared inbox one person's messages at a time: Bob's words run as Bob, after Ada's turn", async () => {
    const held = new HeldModel(actOnLatest);
    const acts: Act[] = [];
    const { platform, a, b } = await startPair(held.respond, {}, [actingTool(acts)]);
    const group = testGroup('shared-crew');
    const say = (via: Instance, sender: { id: string; name: string }, text: string) => via.channel.userMessage({ chat: group, sender, text, mentionsBot: true });
    say(a, { id: 'ada', name: 'Ada' }, 'tidy my notes');
    await waitFor(() => held.waiting === 1, () => "Ada's turn");
    say(b, { id: 'bob', name: 'Bob' }, 'create a job for Bob');
    say(b, { id: 'ada', name: 'Ada' }, 'and then the rest');
    const thread = threadKeyOf(group);
    const waiting = () => Math.max(...[a, b].map((instance) => instance.app.runtime.runner(thread)?.queuedMessages ?? 0));
    await waitFor(() => waiting() >= 2, () => 'both messages handed to the thread');
    await waitFor(() => {
      held.releaseAll();
      return platform.messagesIn(group).length >= 3;
    }, () => `three answers; got ${JSON.stringify(platform.messagesIn(group).map((sent) => sent.text))}`);
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    expect(acts.map((act) => [act.userId, /^\[(\w+)\]/.exec(act.words)?.[1]])).toEqual([
      ['test:ada', 'Ada'],
      ['test:bob', 'Bob'],
      ['test:ada', 'Ada'],
    ]);
    expect(platform.messagesIn(group).map((sent) => sent.text)).toEqual([
      'acted on: [Ada] tidy my notes',
      'acted on: [Bob] create a job for Bob',
      'acted on: [Ada] and then the rest',
    ]);
  }, 60_000);

  it('a tool disabled on one instance is not offered by the other', async () => {
    const { llm, platform, a, b } = await startPair();
    const toolsOfLast = () => (llm.requests.at(-1)?.tools ?? []).map((tool) => tool.function.name);
    b.channel.userMessage({ chat: testDm('user-1'), sender: { id: 'user-1', name: 'One' }, text: 'before' });
    await waitFor(() => platform.messagesIn(testDm('user-1')).length > 0, () => 'the first answer');
    expect(toolsOfLast()).toContain('http_fetch');
    a.channel.command({ chat: testDm('owner'), sender: { id: 'owner', name: 'Owner' }, name: 'policy', args: 'disable http_fetch' });
    await waitFor(() => platform.messagesIn(testDm('owner')).some((sent) => /disable/i.test(sent.text)), () => 'the policy answer');
    b.channel.userMessage({ chat: testDm('user-2'), sender: { id: 'user-2', name: 'Two' }, text: 'after' });
    await waitFor(() => platform.messagesIn(testDm('user-2')).length > 0, () => 'the second answer');
    expect(toolsOfLast()).not.toContain('http_fetch');
  }, 60_000);

  it("counts a sender's messages on every instance against one rate limit", async () => {
    const { platform, a, b } = await startPair(echoAll, { userMessagesPerMinute: 3 });
    const chat = testDm('user-4');
    for (let m = 0; m < 6; m += 1) {
      (m % 2 === 0 ? a : b).channel.userMessage({ chat, sender: { id: 'user-4', name: 'Four' }, text: `r${m}` });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const texts = () => platform.messagesIn(chat).map((sent) => sent.text);
    const echoed = () => texts().flatMap((text) => [...text.matchAll(/r\d/g)].map((match) => match[0]));
    await waitFor(() => echoed().length >= 3 && texts().some((text) => text.includes('faster than 3 a minute')), () => `three answers and a refusal; got ${JSON.stringify(texts())}`);
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    // Each instance saw three; only the first three of the six were taken, and the sender was told once.
    expect(echoed()).toEqual(['r0', 'r1', 'r2']);
    expect(texts().filter((text) => text.includes('faster than 3 a minute'))).toHaveLength(1);
  }, 60_000);

  it("counts commands and oversized messages on every instance against the same rate: the limit's replies and one notice", async () => {
    const { platform, a, b } = await startPair(echoAll, { userMessagesPerMinute: 3, maxInboundChars: 100 });
    const chat = testDm('user-8');
    const sender = { id: 'user-8', name: 'Eight' };
    const burst = ['first', '/help', 'x'.repeat(500), '/help', 'x'.repeat(500), '/tools', 'last'];
    for (const [m, text] of burst.entries()) {
      (m % 2 === 0 ? a : b).channel.userMessage({ chat, sender, text });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const texts = () => platform.messagesIn(chat).map((sent) => sent.text);
    const notices = () => texts().filter((text) => text.includes('faster than 3 a minute'));
    await waitFor(() => notices().length > 0 && texts().length >= 4, () => `three replies and a notice; got ${JSON.stringify(texts())}`);
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    expect(texts()).toHaveLength(4);
    expect(notices()).toHaveLength(1);
    expect(texts().filter((text) => text.startsWith('echo:'))).toEqual(['echo: first']);
    expect(texts().filter((text) => /characters long; the limit is 100/.test(text))).toHaveLength(1);
  }, 60_000);

  it("limits the messages waiting in a conversation's shared inbox, whichever instance received them", async () => {
    const held = new HeldModel();
    const { platform, a, b } = await startPair(held.respond, { maxQueuedPerThread: 2 });
    const chat = testDm('user-6');
    const say = (via: Instance, text: string) => via.channel.userMessage({ chat, sender: { id: 'user-6', name: 'Six' }, text });
    say(a, 'q0');
    await waitFor(() => held.waiting === 1, () => 'the first turn');
    for (let m = 1; m <= 6; m += 1) {
      say(m % 2 === 0 ? a : b, `q${m}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const texts = () => platform.messagesIn(chat).map((sent) => sent.text);
    const refusals = () => texts().filter((text) => text.includes('messages waiting in this conversation'));
    await waitFor(() => refusals().length >= 3, () => `the refusals; got ${JSON.stringify(texts())}`);
    await waitFor(() => {
      held.releaseAll();
      return held.arrived.length >= 2 && held.waiting === 0 && platform.messagesIn(chat).length >= refusals().length + 2;
    }, () => `the answers; got ${JSON.stringify(texts())}`);
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    const answered = texts().flatMap((text) => [...text.matchAll(/q\d/g)].map((match) => match[0]));
    // Every message was either answered or refused with a notice, and no more than the limit waited.
    expect(answered.length + refusals().length).toBe(7);
    expect(answered.length).toBeLessThanOrEqual(4);
  }, 60_000);

  it('a holder that loses its lease mid-turn stops without a word; the instance that takes over answers once', async () => {
    const held = new HeldModel();
    const { platform, a, b } = await startPair(held.respond);
    const chat = testDm('user-7');
    a.channel.userMessage({ chat, sender: { id: 'user-7', name: 'Seven' }, text: 'slow one' });
    await waitFor(() => held.waiting === 1, () => 'the turn');
    const thread = threadKeyOf(chat);
    const holder = clusterOf(a.app.deployment)!.threads.holds(thread) ? a : b;
    // The lease vanishes as if it had lapsed while its holder stalled.
    await clusterOf(holder.app.deployment)!.node.redis.del(threadKeys(thread).lease);
    await waitFor(() => !clusterOf(holder.app.deployment)!.threads.holds(thread), () => 'the holder to find its lease lost', 10_000);
    await waitFor(() => {
      held.releaseAll();
      return platform.messagesIn(chat).some((sent) => sent.text.startsWith('echo:'));
    }, () => `the answer; got ${JSON.stringify(platform.messagesIn(chat).map((sent) => sent.text))}`);
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    const texts = platform.messagesIn(chat).map((sent) => sent.text);
    expect(texts).not.toContain(SHUTDOWN_NOTICE);
    expect(texts.filter((text) => text.startsWith('echo:'))).toHaveLength(1);
  }, 60_000);

  it('reports the shared inboxes in /metrics, the same on every instance', async () => {
    const held = new HeldModel();
    const { platform, a, b } = await startPair(held.respond);
    const chat = testDm('user-5');
    const say = (via: Instance, text: string) => via.channel.userMessage({ chat, sender: { id: 'user-5', name: 'Five' }, text });
    const gauge = async (instance: Instance, name: string) => {
      const text = await createMetrics(instance.app.services, instance.app.runtime, { jobs: instance.app.jobs.store, backlog: () => clusterOf(instance.app.deployment)!.threads.backlog() }).metrics();
      return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    };
    say(a, 'first');
    await waitFor(() => held.waiting === 1, () => 'the first turn');
    // The turn is held: what comes next waits in the thread's inbox on Redis.
    say(b, 'second');
    say(a, 'third');
    await waitFor(async () => (await gauge(a, 'pincer_inbox_messages')) >= 2, () => 'the two messages in the inbox');
    for (const instance of [a, b]) {
      expect(await gauge(instance, 'pincer_inbox_messages')).toBeGreaterThanOrEqual(2);
      expect(await gauge(instance, 'pincer_open_threads')).toBe(1);
    }
    held.releaseAll();
    await waitFor(() => {
      held.releaseAll();
      return platform.messagesIn(chat).some((sent) => sent.text.includes('third'));
    }, () => 'the answers');
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    // The lease is given back after the runner is idle: the thread leaves the open set then.
    await waitFor(async () => (await gauge(b, 'pincer_open_threads')) === 0, () => 'the thread to be closed');
    expect(await gauge(b, 'pincer_inbox_messages')).toBe(0);
  }, 60_000);

  it('an approval asked by an instance that then stops expires on the other, once', async () => {
    // The tool's answer is the expiry's refusal; the page is never fetched.
    const responder: FakeResponder = (request) =>
      request.messages.at(-1)!.role === 'tool'
        ? textReply(`after the question: ${String(request.messages.at(-1)!.content).slice(0, 80)}`)
        : toolCallReply([{ name: 'http_fetch', arguments: { url: 'http://127.0.0.1:9/never' } }]);
    const { platform, a, b } = await startPair(responder, { approvalTimeoutMs: 2_500 });
    const chat = testDm('user-3');
    a.channel.userMessage({ chat, sender: { id: 'user-3', name: 'Three' }, text: 'fetch it' });
    await waitFor(() => platform.approvals.length > 0, () => `the approval prompt; got ${JSON.stringify(platform.messagesIn(chat).map((sent) => sent.text))}`);
    const thread = threadKeyOf(chat);
    const [asker, other] = clusterOf(a.app.deployment)!.threads.holds(thread) ? [a, b] : [b, a];
    // The asker goes away while its question waits; the other instance was running all along.
    await asker.app.stop('test: the asker leaves');
    await waitFor(() => platform.approvals[0]!.state === 'resolved', () => `the expiry; prompt ${JSON.stringify(platform.approvals[0])}`, 15_000);
    await waitFor(() => platform.messagesIn(chat).some((sent) => sent.text.startsWith('after the question')), () => `the answer after the expiry; got ${JSON.stringify(platform.messagesIn(chat).map((sent) => sent.text))}`, 15_000);
    await other.app.runtime.idle();
    expect(platform.approvals[0]!.outcome).toMatchObject({ decision: 'expired' });
    expect(platform.messagesIn(chat).filter((sent) => sent.text.startsWith('after the question'))).toHaveLength(1);
  }, 60_000);

  it('leaves a new thread in Redis while every slot is taken, for the first instance whose slot frees', async () => {
    const held = new HeldModel();
    // A thread left waiting a whole lease TTL is taken by the sweep even with every slot busy (nothing else
    // would take it): a long TTL keeps that out of this test's few seconds, however slow the machine.
    const { platform, a, b } = await startPair(held.respond, { maxConcurrentTurns: 1 }, [], 60_000);
    const person = (n: number) => ({ chat: testDm(`user-${n}`), sender: { id: `user-${n}`, name: `User ${n}` } });
    const holds = (instance: Instance, n: number) => clusterOf(instance.app.deployment)!.threads.holds(threadKeyOf(person(n).chat));
    a.channel.userMessage({ ...person(1), text: 'one' });
    await waitFor(() => held.waiting === 1, () => 'the first turn');
    const [first, second] = holds(a, 1) ? [a, b] : [b, a];
    a.channel.userMessage({ ...person(2), text: 'two' });
    await waitFor(() => held.waiting === 2, () => 'the second turn, on the other instance');
    expect(holds(second, 2)).toBe(true);
    // Both instances are busy: the new threads wait in Redis, not in one instance's queue.
    // Thread 3 is the older one: its news reaches both instances (their coordinators listened first) before 4 is sent.
    const heard = new Set<Instance>();
    for (const instance of [a, b]) {
      clusterOf(instance.app.deployment)!.node.onMessage((news) => {
        if (news.type === 'poke' && news.thread === threadKeyOf(person(3).chat)) heard.add(instance);
      });
    }
    a.channel.userMessage({ ...person(3), text: 'three' });
    await waitFor(() => heard.size === 2, () => 'the news of the third thread on both instances');
    b.channel.userMessage({ ...person(4), text: 'four' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const n of [3, 4]) expect([holds(a, n), holds(b, n)]).toEqual([false, false]);
    // The first slot to free takes the oldest waiting thread; the other still waits.
    held.releaseOne();
    await waitFor(() => held.waiting === 2 && holds(first, 3), () => `the third thread taken by the instance that freed a slot; waiting ${held.waiting}`);
    expect([holds(a, 4), holds(b, 4)]).toEqual([false, false]);
    await waitFor(() => {
      held.releaseAll();
      return [1, 2, 3, 4].every((n) => platform.messagesIn(person(n).chat).some((sent) => sent.text.startsWith('echo:')));
    }, () => 'every answer');
    await Promise.all([a.app.runtime.idle(), b.app.runtime.idle()]);
    for (const n of [1, 2, 3, 4]) expect(platform.messagesIn(person(n).chat).filter((sent) => sent.text.startsWith('echo:'))).toHaveLength(1);
  }, 60_000);

  it('an instance shutting down takes no new thread and gives its threads back at once, so the other answers them', async () => {
    const held = new HeldModel();
    const { platform, a, b } = await startPair(held.respond);
    const person = (n: number) => ({ chat: testDm(`user-${n}`), sender: { id: `user-${n}`, name: `User ${n}` } });
    a.channel.userMessage({ ...person(1), text: 'interrupted' });
    await waitFor(() => held.waiting === 1, () => 'the turn');
    const [leaving, staying] = clusterOf(a.app.deployment)!.threads.holds(threadKeyOf(person(1).chat)) ? [a, b] : [b, a];
    const started = Date.now();
    const stopped = leaving.app.stop('test: a rolling restart');
    // Messages for new threads keep coming to the instance that is stopping: the other one runs them.
    for (const n of [2, 3, 4]) leaving.channel.userMessage({ ...person(n), text: `new ${n}` });
    await stopped;
    // Not held up by turns of threads taken during shutdown (its deadline is 3 s).
    expect(Date.now() - started).toBeLessThan(2_000);
    // The interrupted thread was given back, and taken by the other instance without waiting for the lease to lapse.
    await waitFor(() => clusterOf(staying.app.deployment)!.threads.holds(threadKeyOf(person(1).chat)), () => 'the interrupted thread taken over', 1_000);
    await waitFor(() => {
      held.releaseAll();
      return [1, 2, 3, 4].every((n) => platform.messagesIn(person(n).chat).some((sent) => sent.text.startsWith('echo:')));
    }, () => `every answer; got ${JSON.stringify([1, 2, 3, 4].map((n) => platform.messagesIn(person(n).chat).map((sent) => sent.text)))}`);
    await staying.app.runtime.idle();
    for (const n of [1, 2, 3, 4]) expect(platform.messagesIn(person(n).chat).filter((sent) => sent.text.startsWith('echo:'))).toHaveLength(1);
  }, 60_000);
});

describe.skipIf(!available)(`usage counted by two instances on Redis${skip}`, () => {
  it('adds up the calls of both instances in the stored total', async () => {
    await flushDb(redisUrl());
    const { Store } = await import('../../src/store/store.js');
    const { UsageLedger } = await import('../../src/engine/usage.js');
    const stores = await Promise.all([Store.open({ url: redisUrl() }), Store.open({ url: redisUrl() })]);
    const ledgers = stores.map((store) => new UsageLedger(store));
    const response = { content: 'ok', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 5, cachedTokens: 0 }, costUsd: 0.01 } as const;
    for (let round = 0; round < 3; round += 1) {
      await Promise.all(ledgers.map((ledger) => Promise.all(Array.from({ length: 7 }, () => ledger.record('test:u', response as never)))));
      await Promise.all(ledgers.map((ledger) => ledger.flush()));
    }
    // The stored total has both instances' calls.
    const total = await new UsageLedger(stores[0]!).userToday('test:u');
    expect(total.calls).toBe(42);
    expect(total.inputTokens).toBe(420);
    // A call on one instance counts in what the other reads next (the daily cost ceiling), with no flush in between.
    await ledgers[0]!.record('test:u', response as never);
    expect((await ledgers[0]!.userToday('test:u')).calls).toBe(43);
    expect((await ledgers[1]!.userToday('test:u')).calls).toBe(43);
    expect((await ledgers[1]!.userToday('test:u')).costUsd).toBeCloseTo(0.43, 10);
    await Promise.all(stores.map((store) => store.close()));
  });
});
