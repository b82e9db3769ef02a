/**
 * Fencing on a shared Redis store: an instance whose lease on the thread
 * lapsed (another instance may hold it now) runs no further tool call and
 * sends nothing; and should it write the thread before it notices, Redis
 * refuses the write, whose fencing token is older than the new holder's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { threadKeyOf } from '../../src/channels/types.js';
import { threadKeys } from '../../src/cluster/thread-storage.js';
import type { Tool } from '../../src/tools/types.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { HeldModel } from '../support/app-rig.js';
import { TestPlatform, testDm } from '../support/test-channel.js';
import { startInstance } from './instances.js';
import { clusterOf } from '../../src/cluster/deployment.js';

/** Database 7 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url } = testRedisDb(7);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** How many times the lookup ran. */
let lookups = 0;

/** A read-only tool: a turn journals nothing before it runs, so no fenced write stands in its way. */
const lookup: Tool = {
  name: 'lookup',
  description: 'Looks something up (test)',
  parameters: z.object({}),
  readOnly: true,
  requiresApproval: () => 'never',
  execute: async () => {
    lookups += 1;
    return 'found it';
  },
};

/**
 * Starts one instance whose model holds its first answer (`first`); while it
 * waits, the thread's lease is taken by another instance, as after a stall
 * longer than the lease. Resolves once the turn ended and this instance either
 * found the lease gone or sent something.
 */
async function turnAfterLapse(first: FakeLlmEntry): Promise<{ messages: string[]; modelRequests: number }> {
  await flushDb(url());
  lookups = 0;
  const held = new HeldModel((request: FakeLlmRequest) => (request.messages.at(-1)?.role === 'tool' ? textReply('after the lookup') : first));
  const llm = await startFakeLlm({ responder: held.respond });
  cleanups.push(() => llm.close());
  const platform = new TestPlatform();
  // A long lease: its renewal (every third of it) cannot notice the loss during the test, only the turn's own check can.
  const instance = await startInstance('a', { storeUrl: url(), platform, llm, tools: [lookup], leaseTtlMs: 60_000 });
  cleanups.push(() => instance.stop());
  let ended = false;
  instance.app.services.events.on('turn.ended', () => (ended = true));
  const chat = testDm('ada');
  const thread = threadKeyOf(chat);
  instance.channel.userMessage({ chat, sender: { id: 'ada', name: 'Ada' }, text: 'look it up' });
  await platform.waitFor(() => held.waiting === 1, 10_000, 'the model request');
  const cluster = clusterOf(instance.app.deployment)!;
  expect(cluster.threads.holds(thread)).toBe(true);
  await cluster.node.redis.set(threadKeys(thread).lease, 'elsewhere#999', 'PX', 60_000);
  await platform.waitFor(() => {
    held.releaseAll();
    return ended && (!cluster.threads.holds(thread) || platform.messagesIn(chat).length > 0);
  }, 10_000, 'the end of the turn');
  return { messages: platform.messagesIn(chat).map((sent) => sent.text), modelRequests: held.arrived.length };
}

describe.skipIf(!available)(`a turn whose thread lease lapsed${skip}`, () => {
  it('does not run its next tool call, nor send anything', async () => {
    const outcome = await turnAfterLapse(toolCallReply([{ name: 'lookup', arguments: {} }]));
    expect(lookups).toBe(0);
    expect(outcome).toEqual({ messages: [], modelRequests: 1 });
  }, 30_000);

  it('does not send its answer', async () => {
    const outcome = await turnAfterLapse(textReply('the answer'));
    expect(outcome).toEqual({ messages: [], modelRequests: 1 });
  }, 30_000);
});

describe.skipIf(!available)(`a thread write of an instance whose lease was taken over${skip}`, () => {
  it('is refused by Redis, though that instance still believes it holds the lease', async () => {
    await flushDb(url());
    const held = new HeldModel(() => textReply('an answer'));
    const llm = await startFakeLlm({ responder: held.respond });
    cleanups.push(async () => {
      held.releaseAll();
      await llm.close();
    });
    const platform = new TestPlatform();
    // Long leases: no renewal runs during the test, so instance a does not learn that it lost the thread.
    const a = await startInstance('a', { storeUrl: url(), platform, llm, leaseTtlMs: 60_000 });
    cleanups.push(() => a.stop());
    const chat = testDm('ada');
    const thread = threadKeyOf(chat);
    const keys = threadKeys(thread);
    a.channel.userMessage({ chat, sender: { id: 'ada', name: 'Ada' }, text: 'are you there?' });
    await platform.waitFor(() => held.waiting === 1, 10_000, 'the model request of instance a');
    const redis = clusterOf(a.app.deployment)!.node.redis;
    const stale = await redis.get(keys.lease);
    expect(stale).toMatch(/^a#\d+$/);

    // The lease lapses (a stalled past it) and instance b takes the thread over with the next fencing token.
    await redis.del(keys.lease);
    const b = await startInstance('b', { storeUrl: url(), platform, llm, leaseTtlMs: 60_000 });
    cleanups.push(() => b.stop());
    await platform.waitFor(() => held.waiting === 2, 10_000, 'the model request of instance b, which took the thread over');
    const holder = await redis.get(keys.lease);
    expect(holder).toMatch(/^b#\d+$/);
    expect(Number(holder!.split('#')[1])).toBeGreaterThan(Number(stale!.split('#')[1]));
    expect(clusterOf(b.app.deployment)!.threads.holds(thread)).toBe(true);
    expect(clusterOf(a.app.deployment)!.threads.holds(thread)).toBe(true);
    expect(clusterOf(a.app.deployment)!.threads.holderOf(thread)).toBe(stale);

    const before = { head: await redis.get(keys.head), log: await redis.lrange(keys.log, 0, -1) };
    const write = a.app.services.history.update(thread, chat, (record) => {
      record.messages.push({ role: 'assistant', content: 'written by a stale holder' });
    });
    await expect(write).rejects.toThrow(/STALE/);
    expect({ head: await redis.get(keys.head), log: await redis.lrange(keys.log, 0, -1) }).toEqual(before);
  }, 30_000);
});
