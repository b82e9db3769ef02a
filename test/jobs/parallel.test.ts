/**
 * `jobs.maxParallel` through the whole app (SPEC section 12): jobs created
 * together beyond the limit wait ("waiting to start") while at most
 * `maxParallel` of them have a model request open, and each waiting one starts
 * only when a running one has ended; in the end every job posts its result.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmRequest, type FakeResponder } from '../fakes/llm/server.js';
import { HeldModel, startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { holdRedisDb } from '../e2e/cluster-harness.js';

// Database 12 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(12);
}, 900_000);
afterAll(() => releaseDb?.());

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The engines the suite runs on: in this process, and BullMQ when a Redis is there to use. */
const ENGINES: { name: string; storeUrl?: string; skip?: string }[] = [
  { name: 'the in-process engine' },
  process.env.PINCER_TEST_REDIS_URL
    ? { name: 'BullMQ on Redis', storeUrl: redisDb(process.env.PINCER_TEST_REDIS_URL, 12) }
    : { name: 'BullMQ on Redis', skip: 'PINCER_TEST_REDIS_URL is not set' },
];

function redisDb(base: string, db: number): string {
  const url = new URL(base);
  url.pathname = `/${db}`;
  return url.toString();
}

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

/** The job's goal, from its first user message; undefined for a chat request. */
function goalOf(request: FakeLlmRequest): string | undefined {
  if (!/background job/.test(String(request.messages[0]?.content ?? ''))) return undefined;
  return /^Goal: (.*)$/m.exec(String(request.messages.find((m) => m.role === 'user')?.content ?? ''))?.[1];
}

/**
 * Job requests wait until the test releases them (then the job says DONE);
 * each records how many had been released when it arrived. The chat side:
 * "jobs <name> xN" is one batch of N create_job calls.
 */
class ParallelModel {
  readonly held = new HeldModel((request) => textReply(`DONE: ${goalOf(request)} finished`));
  /** Per job goal, how many job requests had been released when its first request arrived. */
  readonly releasedBeforeStart = new Map<string, number>();
  private released = 0;

  respond: FakeResponder = (request, index) => {
    const goal = goalOf(request);
    if (goal !== undefined) {
      if (!this.releasedBeforeStart.has(goal)) this.releasedBeforeStart.set(goal, this.released);
      return this.held.respond(request, index);
    }
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return textReply('chat: created');
    const many = /^jobs (\S+) x(\d+)$/.exec(String(last.content).replace(/^\[[^\]]*\]\s*/, ''));
    if (!many) return textReply('echo');
    return toolCallReply(Array.from({ length: Number(many[2]) }, (_, i) => ({ name: 'create_job', arguments: { title: `${many[1]} ${i}`, goal: `${many[1]}-${i}` } })));
  };

  /** Answers the oldest waiting job request. */
  releaseOne(): void {
    if (this.held.releaseOne()) this.released += 1;
  }
}

function texts(): string[] {
  return rig!.platform.messagesIn(dm).map((m) => m.text);
}

for (const engine of ENGINES) {
  describe.skipIf(Boolean(engine.skip))(`jobs.maxParallel on ${engine.name}${engine.skip ? ` (skipped: ${engine.skip})` : ''}`, () => {
    for (const maxParallel of [1, 2]) {
      it(`runs at most ${maxParallel} of 4 jobs created together; the others wait, then run as places free up`, async () => {
        if (engine.storeUrl) {
          const redis = new Redis(engine.storeUrl);
          await redis.flushdb();
          redis.disconnect();
        }
        const model = new ParallelModel();
        rig = await startAppRig({
          responder: model.respond,
          config: { jobs: { maxParallel }, ...(engine.storeUrl ? { storeUrl: engine.storeUrl } : {}) },
        });
        // Allowed without asking, so that the four are created in one go.
        await rig.app.services.permissions.set('test:owner', 'create_job', 'alwaysAllow');
        rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'jobs batch x4' });
        await rig.platform.waitFor(() => texts().includes('chat: created'), 10_000, 'the four jobs created');
        await rig.platform.waitFor(() => model.held.waiting >= maxParallel, 10_000, `${maxParallel} job requests`);

        // The ones without a place say so in their status message.
        const waiting = () => texts().filter((t) => /^🕒 Job \S+ "batch \d": waiting to start/.test(t));
        expect(waiting()).toHaveLength(4 - maxParallel);

        // Each release lets exactly one waiting job start.
        for (let started = maxParallel; started < 4; started++) {
          model.releaseOne();
          await rig.platform.waitFor(() => model.releasedBeforeStart.size >= started + 1, 10_000, `job #${started + 1} to start`);
          await rig.platform.waitFor(() => model.held.waiting >= maxParallel, 10_000, `${maxParallel} job requests`);
        }
        while (model.held.waiting) model.releaseOne();
        await rig.platform.waitFor(() => texts().filter((t) => /^✅ Job \S+ "batch \d" is done\.\n\nbatch-\d finished$/.test(t)).length === 4, 10_000, 'the four results');

        expect(model.held.maxInFlight).toBe(maxParallel);
        // A job that started late started only after as many earlier ones had been answered.
        const lateStarts = [...model.releasedBeforeStart.values()].sort((a, b) => a - b);
        expect(lateStarts).toEqual([...Array(maxParallel).fill(0), ...Array.from({ length: 4 - maxParallel }, (_, i) => i + 1)]);
        expect(waiting()).toHaveLength(0);
      });
    }
  });
}
