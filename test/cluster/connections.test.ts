/**
 * One instance on a Redis store holds few connections to it: the store, the
 * instances' messages, rate limits, claims and the BullMQ queues share one
 * command connection and one subscriber; only BullMQ's workers add one
 * blocking connection each. A hosted Redis counts (and bills) connections.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { threadKeyOf } from '../../src/channels/types.js';
import type { Tool } from '../../src/tools/types.js';
import { flushDb, redisDbUrl, testRedisDb, holdRedisDb } from '../e2e/cluster-harness.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { TestPlatform, testDm } from '../support/test-channel.js';
import { startInstance } from './instances.js';

// Database 11 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(11);
}, 900_000);
afterAll(() => releaseDb?.());

/** Database 11 of the test Redis: this suite's own; every connection to it is the instance's. */
const DB = 11;
const { available, skip, url } = testRedisDb(DB);

/**
 * The most connections one instance may hold: commands, pub/sub, and one
 * blocking connection for each of BullMQ's three workers (approval expiry,
 * routines, jobs). Before they were shared, an instance held 13.
 */
const MAX_CONNECTIONS = 5;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tool that is always asked about first: asking arms the approval's expiry timer. */
const guarded: Tool = {
  name: 'guarded',
  description: 'Does something an owner must approve.',
  parameters: z.object({}),
  readOnly: false,
  requiresApproval: () => 'always',
  async execute() {
    return 'done';
  },
};

/** Calls the guarded tool for a new message, then answers in words. */
function responder(request: FakeLlmRequest): FakeLlmEntry {
  return request.messages.at(-1)!.role === 'tool' ? textReply('finished') : toolCallReply([{ name: 'guarded', arguments: {} }]);
}

/** The connections to database `db` of the server, other than `own`. */
async function connectionsTo(admin: Redis, db: number): Promise<string[]> {
  const own = await admin.client('ID');
  const list = (await admin.client('LIST')) as string;
  return list.split('\n').filter((line) => line.includes(` db=${db} `) && !line.startsWith(`id=${own} `));
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!available)(`an instance's connections to the Redis store${skip}`, () => {
  it(`are at most ${MAX_CONNECTIONS} while it answers and waits on a question`, async () => {
    await flushDb(url());
    // The counting connection is on another database, so it does not count itself.
    const admin = new Redis(redisDbUrl(process.env.PINCER_TEST_REDIS_URL!, 0), { maxRetriesPerRequest: 1 });
    cleanups.push(async () => void admin.disconnect());
    const llm = await startFakeLlm({ responder });
    cleanups.push(() => llm.close());
    const platform = new TestPlatform();
    const instance = await startInstance('only', { storeUrl: url(), platform, llm, tools: [guarded] });
    cleanups.push(() => instance.stop());

    const chat = testDm('user-1');
    instance.channel.userMessage({ chat, sender: { id: 'user-1', name: 'One' }, text: 'do the guarded thing' });
    await waitFor(() => platform.approvals.length > 0, 'the approval prompt');
    // The expiry timer is armed; its worker's blocking connection opens in the background.
    expect(await instance.app.services.approvals.pendingFor(threadKeyOf(chat))).toBeDefined();
    // Counted once every worker's blocking connection is open (it waits in a blocking command), not after a pause.
    let connections = await connectionsTo(admin, DB);
    for (const end = Date.now() + 10_000; connections.filter((line) => / cmd=(bzpopmin|blmove|brpoplpush|bzpopmax)\b/.test(line)).length < 3; ) {
      if (Date.now() > end) throw new Error(`the workers' blocking connections did not all open:\n${connections.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      connections = await connectionsTo(admin, DB);
    }
    expect(connections.length, connections.join('\n')).toBeLessThanOrEqual(MAX_CONNECTIONS);
  }, 30_000);
});
