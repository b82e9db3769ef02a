/**
 * The daily cost limit booked in Redis: turns of one person running at the
 * same time on three instances get no more model calls than the same messages
 * sent one by one; a person's first booking of the day starts from the usage
 * already on record; a booking never settled lapses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { UsageLedger } from '../../src/engine/usage.js';
import { RedisCostBudget } from '../../src/cluster/cost-budget.js';
import { parseConfig } from '../../src/config/load.js';
import { Store } from '../../src/store/store.js';
import { flushDb, testRedisDb } from '../e2e/cluster-harness.js';
import { startFakeLlm, type FakeLlm } from '../fakes/llm/server.js';
import { HeldModel } from '../support/app-rig.js';
import { LIMIT_MESSAGE, SIXTY_CENT_CALLS, sixtyCentEcho } from '../support/priced-model.js';
import { TestPlatform, testDm, testGroup, type TestChannel } from '../support/test-channel.js';

/** Database 3 of the test Redis: this suite's own, emptied before each test. */
const { available, skip, url: redisUrl } = testRedisDb(3);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Instance {
  app: App;
  channel: TestChannel;
}

async function startInstance(platform: TestPlatform, llm: FakeLlm, id: string): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), `pincer-budget-${id}-`));
  const config = parseConfig({
    dataDir: dir,
    storeUrl: redisUrl(),
    owners: ['test:owner'],
    cluster: { instanceId: id, leaseTtlMs: 2_000 },
    llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false, ...SIXTY_CENT_CALLS.llm },
    agent: { shutdownTimeoutMs: 3_000, ...SIXTY_CENT_CALLS.agent },
  });
  let channel: TestChannel | undefined;
  const app = await createApp({ config, channels: [{ name: 'test', create: (deps) => (channel = platform.createChannel(deps)) }] });
  await app.start();
  cleanups.push(async () => {
    await app.stop('test over');
    rmSync(dir, { recursive: true, force: true });
  });
  return { app, channel: channel! };
}

async function waitFor(check: () => boolean, what: () => string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A budget straight on the suite's database, with the ledger of a store there. */
async function budgetOn(ttlMs: number): Promise<{ budget: RedisCostBudget; ledger: UsageLedger }> {
  await flushDb(redisUrl());
  const store = await Store.open({ url: redisUrl() });
  const redis = new Redis(redisUrl());
  cleanups.push(async () => {
    redis.disconnect();
    await store.close();
  });
  const ledger = new UsageLedger(store);
  return { budget: new RedisCostBudget(redis, ledger, 1, ttlMs), ledger };
}

describe.skipIf(!available)(`the daily cost limit on Redis${skip}`, () => {
  it('lets at most two of four concurrent turns of one person, on three instances, call the model', async () => {
    await flushDb(redisUrl());
    const model = new HeldModel(sixtyCentEcho);
    const llm = await startFakeLlm({ responder: model.respond, record: true });
    cleanups.push(() => llm.close());
    const platform = new TestPlatform();
    const instances = [await startInstance(platform, llm, 'a'), await startInstance(platform, llm, 'b'), await startInstance(platform, llm, 'c')];
    const ann = { id: 'ann', name: 'Ann' };
    const chats = [testDm(ann.id), testGroup('g1'), testGroup('g2'), testGroup('g3')];
    for (const [index, chat] of chats.entries()) {
      instances[index % instances.length]!.channel.userMessage({ chat, sender: ann, text: `message ${index}`, mentionsBot: true });
    }
    const refused = () => chats.filter((chat) => LIMIT_MESSAGE.test(platform.lastMessage(chat)?.text ?? ''));
    await waitFor(
      () => model.waiting + refused().length === chats.length,
      () => `every turn at the model or refused; ${model.waiting} at the model, ${refused().length} refused`,
    );
    await waitFor(() => {
      model.releaseAll();
      return chats.every((chat) => platform.lastMessage(chat) !== undefined);
    }, () => 'an answer in every chat');
    await Promise.all(instances.map((instance) => instance.app.runtime.idle()));
    expect(model.arrived).toHaveLength(2);
    expect(refused()).toHaveLength(2);
    expect(chats.filter((chat) => platform.lastMessage(chat)!.text.startsWith('echo:'))).toHaveLength(2);
  }, 60_000);

  it("counts one instance's bookings and settled calls on the others", async () => {
    await flushDb(redisUrl());
    const llm = await startFakeLlm({ responder: sixtyCentEcho });
    cleanups.push(() => llm.close());
    const platform = new TestPlatform();
    const [a, b, c] = [await startInstance(platform, llm, 'a'), await startInstance(platform, llm, 'b'), await startInstance(platform, llm, 'c')];
    const onA = await a!.app.services.budget.book('test:ann', 0.6);
    expect(onA).toBeDefined();
    expect(await b!.app.services.budget.book('test:ann', 0.6)).toBeDefined();
    expect(await c!.app.services.budget.book('test:ann', 0.6)).toBeUndefined();
    await a!.app.services.budget.release(onA!);
    const again = await c!.app.services.budget.book('test:ann', 0.6);
    expect(again).toBeDefined();
    await c!.app.services.budget.settle(again!, 0.5);
    // $0.50 spent and $0.60 booked on b: still full on a.
    expect(await a!.app.services.budget.book('test:ann', 0.01)).toBeUndefined();
  }, 60_000);

  it("starts a person's first booking of the day from the usage already on record", async () => {
    const { budget, ledger } = await budgetOn(60_000);
    const call = { content: '', toolCalls: [], finishReason: 'stop' as const, usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 }, costUsd: 0.9, model: 'm' };
    await ledger.record('test:ann', call);
    const first = await budget.book('test:ann', 0.6);
    expect(first).toBeDefined();
    expect(await budget.book('test:ann', 0.6)).toBeUndefined();
    // Settled at its real cost ($0.10 less than its booking), the day stands at $1.00: nothing more passes.
    await budget.settle(first!, 0.1);
    expect(await budget.book('test:ann', 0.01)).toBeUndefined();
    expect(await budget.book('test:bob', 0.6)).toBeDefined();
  });

  it('refuses while spent plus booked reaches the limit, and forgets a booking past its expiry', async () => {
    const { budget } = await budgetOn(500);
    const first = await budget.book('test:ann', 0.6);
    expect(await budget.book('test:ann', 0.6)).toBeDefined();
    expect(await budget.book('test:ann', 0.6)).toBeUndefined();
    const released = Date.now();
    await budget.release(first!);
    expect(await budget.book('test:ann', 0.6)).toBeDefined();
    expect(await budget.book('test:ann', 0.6)).toBeUndefined();
    // Nobody settles the two bookings (as if their process died): after their half second they no longer count.
    let again = await budget.book('test:ann', 0.6);
    while (!again && Date.now() - released < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await budget.book('test:ann', 0.6);
    }
    expect(again).toBeDefined();
    expect(Date.now() - released).toBeGreaterThanOrEqual(490);
  });
});
