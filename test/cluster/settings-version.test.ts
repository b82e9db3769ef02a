/**
 * Policy and permission changes on a Redis store shared by two instances: a
 * change reported done on one instance is honoured by the other's next
 * decision, even when the message that tells the instances never reached it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLUSTER_PREFIX } from '../../src/cluster/node.js';
import { silentLogger } from '../../src/log.js';
import type { ToolCall } from '../../src/llm/types.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { flushDb, testRedisDb, holdRedisDb } from '../e2e/cluster-harness.js';
import { startFakeLlm } from '../fakes/llm/server.js';
import { echoAll } from '../support/app-rig.js';
import { TestPlatform, testDm } from '../support/test-channel.js';
import { startInstance, type Instance } from './instances.js';
import { clusterOf } from '../../src/cluster/deployment.js';

// Database 13 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(13);
}, 900_000);
afterAll(() => releaseDb?.());

/** Database 13 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url } = testRedisDb(13);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Who the tool ran for, in order. */
const runs: string[] = [];

/** A tool with a side effect that asks first unless the person chose Always allow. */
const probe: Tool = {
  name: 'probe',
  description: 'Changes something (test)',
  parameters: z.object({}),
  readOnly: false,
  requiresApproval: () => 'unlessAutoApproved',
  execute: async (_params, ctx) => {
    runs.push(ctx.userId);
    return 'changed';
  },
};

const call: ToolCall = { id: 'call-1', name: 'probe', arguments: '{}' };

/** A DM of `userId` on the test platform, as the pipeline sees it. */
function dmContext(userId: string): ToolContext {
  return { userId, threadKey: `test:${userId}`, channel: 'test', scope: 'global', approval: { kind: 'chat', chatKind: 'dm' }, signal: new AbortController().signal, log: silentLogger };
}

/** Instance `b` stops hearing the other instances (its pub/sub connection leaves the channel). */
async function cutPubSub(instance: Instance): Promise<void> {
  await clusterOf(instance.app.deployment)!.node.connections['listening']!.unsubscribe();
}

async function startPair(): Promise<{ platform: TestPlatform; a: Instance; b: Instance }> {
  await flushDb(url());
  runs.length = 0;
  const llm = await startFakeLlm({ responder: echoAll });
  cleanups.push(() => llm.close());
  const platform = new TestPlatform();
  const options = { storeUrl: url(), platform, llm, tools: [probe] };
  const b = await startInstance('b', options);
  cleanups.push(() => b.stop());
  // Started last: the platform's commands reach a through its adapter.
  const a = await startInstance('a', options);
  cleanups.push(() => a.stop());
  return { platform, a, b };
}

/** Runs a command on `instance` and waits for its answer in the DM. */
async function command(platform: TestPlatform, instance: Instance, userId: string, name: string, args: string, answer: RegExp): Promise<void> {
  const chat = testDm(userId);
  const before = platform.messagesIn(chat).length;
  instance.channel.command({ chat, sender: { id: userId, name: userId }, name, args });
  await platform.waitFor(() => platform.messagesIn(chat).slice(before).some((sent) => answer.test(sent.text)), 10_000, `the answer to /${name} ${args}`);
}

describe.skipIf(!available)(`policy and permissions on a shared Redis store${skip}`, () => {
  it("an instance that missed the news of a change decides by it at once: a revoked Always allow asks, a disabled tool is refused", async () => {
    const { platform, a, b } = await startPair();
    // Two people chose Always allow (as the prompt's button stores it); b decides by that, and keeps it in memory.
    for (const user of ['test:ada', 'test:bob']) expect(await a.app.services.permissions.set(user, 'probe', 'alwaysAllow')).toEqual({ ok: true });
    for (const user of ['test:ada', 'test:bob']) expect((await b.app.services.pipeline.run(call, dmContext(user))).status).toBe('ok');
    expect(runs).toEqual(['test:ada', 'test:bob']);

    await cutPubSub(b);
    // Ada takes her choice back on a; b's very next decision asks her first.
    await command(platform, a, 'ada', 'permissions', 'reset probe', /Reset: probe/);
    expect((await b.app.services.pipeline.run(call, dmContext('test:ada'))).status).toBe('needs_approval');
    // The owner disables the tool on a; b refuses it to Bob at once, and no longer offers it.
    await command(platform, a, 'owner', 'policy', 'disable probe global', /disable/i);
    expect((await b.app.services.pipeline.run(call, dmContext('test:bob'))).status).toBe('rejected');
    const offered = await b.app.services.pipeline.definitions(dmContext('test:bob'));
    expect(offered.map((tool) => tool.name)).not.toContain('probe');
    expect(runs).toEqual(['test:ada', 'test:bob']);
  }, 30_000);

  it('one batch of calls costs one read of the version on Redis', async () => {
    const { b } = await startPair();
    const redis = clusterOf(b.app.deployment)!.node.redis;
    const sent: string[] = [];
    const sendCommand = redis.sendCommand.bind(redis);
    // The connection is the instance's for every command: the store's reads of records go on it too.
    redis.sendCommand = (command) => {
      if (String(command.args[0]).startsWith(CLUSTER_PREFIX)) sent.push(command.name);
      return sendCommand(command);
    };
    try {
      const calls = Array.from({ length: 5 }, (_, i) => ({ ...call, id: `call-${i}` }));
      const results = await b.app.services.pipeline.runBatch(calls, dmContext('test:cy'));
      expect(results.map((result) => result.status)).toEqual(Array(5).fill('needs_approval'));
    } finally {
      redis.sendCommand = sendCommand;
    }
    expect(sent.filter((name) => name === 'get')).toHaveLength(1);
  }, 30_000);
});
