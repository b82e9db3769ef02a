/**
 * Three instances of the built product on one Redis store answer as one bot
 * (SPEC section 15), on the Telegram fake (one elected poller) and the Slack
 * fake in Socket Mode (a connection per instance, events spread over them):
 * - 1,000 messages over 100 threads with instances SIGKILLed at three moments of
 *   the run (and started again): every message answered, each chat's answers in
 *   the order it wrote, none twice but where docs/deployment.md allows it;
 * - an approval pressed after the instance that showed it died: the tool runs
 *   once and its answer arrives once;
 * - a policy change made on one instance holds for every instance's next
 *   model request.
 * Needs PINCER_TEST_REDIS_URL; uses its database 12, emptied before each test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeResponder } from '../fakes/llm/server.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from './build.js';
import {
  answerReport,
  bodyOf,
  echoResponder,
  flushDb,
  redisDbUrl,
  slackChat,
  startCluster,
  telegramChat,
  writeAll,
  type Cluster,
  type ClusterChat,
  type Exchange,
  holdRedisDb,
} from './cluster-harness.js';
import { textOf } from './model.js';
import { cleanUp, waitUntil } from './pincer.js';
import { OWNER, buttonsOf, dmMessages, press, say, waitForDm } from './telegram.js';

// Database 12 of the test Redis is shared with another suite: one at a time.
let releaseDb: (() => void) | undefined;
beforeAll(async () => {
  if (process.env.PINCER_TEST_REDIS_URL) releaseDb = await holdRedisDb(12);
}, 900_000);
afterAll(() => releaseDb?.());

const REDIS = process.env.PINCER_TEST_REDIS_URL;
const SKIPPED = REDIS ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)';
const STORE = REDIS ? redisDbUrl(REDIS, 12) : '';
const IDS = ['a', 'b', 'c'] as const;
const SLACK_OWNER = 'U0OWNER';
const TEAM_CHANNEL = 'C0TEAM';
const CONFIG = ['cluster:', '  leaseTtlMs: 2000', 'tools:', '  http:', '    allowHosts: ["127.0.0.1"]', ''].join('\n');
const MODEL_LATENCY_MS = 20;
/** What the local page says; the model quotes it once the fetch's result reaches it. */
const PAGE = 'the page says hello';

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
let slack: FakeSlack | undefined;
let cluster: Cluster | undefined;
let server: Server | undefined;

beforeAll(() => {
  if (REDIS) ensureBuilt();
}, 130_000);

beforeEach(async () => {
  if (REDIS) await flushDb(STORE);
});

afterEach(async () => {
  await cleanUp();
  await cluster?.close();
  await llm?.close();
  await telegram?.close();
  await slack?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  llm = telegram = slack = cluster = server = undefined;
});

/** The Slack member who writes thread `thread`'s messages, and their DM. */
const slackUser = (thread: number) => `U0P${thread}`;
const slackDm = (thread: number) => `D0P${thread}`;
/** The Telegram user (and DM) of thread `thread`. */
const telegramUser = (thread: number) => 2_100_000 + thread;

/** Starts the fakes and instances a, b and c, and waits until all three run. */
async function startBot(responder: FakeResponder): Promise<{ bot: Cluster; tg: FakeTelegram; sl: FakeSlack }> {
  llm = await startFakeLlm({ responder });
  const tg = (telegram = await startFakeTelegram());
  const sl = (slack = await startFakeSlack());
  sl.addUser({ id: SLACK_OWNER, name: 'Owner', isAdmin: true });
  sl.addConversation({ id: TEAM_CHANNEL, type: 'channel', name: 'team' });
  for (let thread = 0; thread < 100; thread++) {
    sl.addUser({ id: slackUser(thread), name: `Person ${thread}` });
    sl.addConversation({ id: slackDm(thread), type: 'im', user: slackUser(thread) });
  }
  const owners = `telegram:${OWNER.id},slack:${SLACK_OWNER}`;
  const bot = (cluster = await startCluster({ ids: IDS, storeUrl: STORE, llm, telegram: tg, slack: sl, config: CONFIG, env: { PINCER_OWNERS: owners } }));
  await bot.waitRunning(30_000);
  return { bot, tg, sl };
}

/** Runs `work`; a failure carries what each instance did and printed. */
async function explained<T>(work: Promise<T>, context: () => string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${context()}`);
  }
}

/** The first chats of the run are Telegram's; the rest Slack's. */
const TELEGRAM_CHATS = 70;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The model requests of every instance, oldest first. */
function modelRequests(bot: Cluster): Exchange[] {
  return bot.exchanges('llm').filter((exchange) => exchange.path.endsWith('/chat/completions'));
}

/** Threads a surviving instance resumed in the delivery phase of a turn the killed one began. */
function threadsResumedInDelivery(bot: Cluster): string[] {
  return bot.instances.flatMap((instance) =>
    instance.process
      .output()
      .split('\n')
      .filter((line) => line.includes('resuming a turn interrupted') && line.includes('"phase":"delivering"'))
      .map((line) => (JSON.parse(line) as { thread: string }).thread),
  );
}

/** Whether a model request offered `http_fetch` among its tools. */
function offersFetch(exchange: Exchange): boolean {
  const tools = (bodyOf(exchange.requestBody).tools ?? []) as { function?: { name?: string } }[];
  return tools.some((tool) => tool.function?.name === 'http_fetch');
}

describe.skipIf(!REDIS)(`three instances on one Redis store${SKIPPED}`, () => {
  it('1,000 messages over 100 threads, instances SIGKILLed at three moments: none lost, each chat in order, none answered twice', async () => {
    const { bot, tg, sl } = await startBot(echoResponder(MODEL_LATENCY_MS));
    const chats: ClusterChat[] = [
      ...Array.from({ length: TELEGRAM_CHATS }, (_, i) => telegramChat(bot, tg, i, telegramUser(i))),
      ...Array.from({ length: 20 }, (_, i) => slackChat(bot, sl, 70 + i, slackUser(70 + i), slackDm(70 + i))),
      ...Array.from({ length: 10 }, (_, i) => slackChat(bot, sl, 90 + i, slackUser(90 + i), TEAM_CHANNEL, true)),
    ];
    const sent = new Map<number, string[]>();
    const report = () => answerReport(chats, sent);
    /**
     * Three kills at moments of the run, not of the clock, each followed by a restart of the
     * instance killed, so that three instances serve the rest: the elected Telegram poller once
     * 15% of the messages are answered (every Telegram thread waits for the next election); the
     * instance that asked the model last once 45% are (a turn in flight); the one that posted to
     * Slack last once 75% are (a delivery in flight).
     */
    const moments: { at: number; who: string; victim: () => string | undefined }[] = [
      { at: 150, who: 'the Telegram poller', victim: () => bot.poller() },
      { at: 450, who: 'the instance that asked the model last', victim: () => modelRequests(bot).at(-1)?.instance },
      { at: 750, who: 'the instance that posted to Slack last', victim: () => bot.exchanges('slack').filter((exchange) => /chat\.(postMessage|update)$/.test(exchange.path)).at(-1)?.instance },
    ];
    const kills: string[] = [];
    /** What the killed processes printed (their successors' log lines are read there too). */
    const killedOutput: string[] = [];
    const killing = (async () => {
      for (const moment of moments) {
        await waitUntil(() => report().answered >= moment.at, 120_000, () => `${moment.at} answers before killing ${moment.who}; ${report().text}`);
        const victim = moment.victim() ?? 'b';
        await bot.kill9(victim);
        kills.push(`${victim} (${moment.who}, at ${report().answered} answers)`);
        killedOutput.push(bot.get(victim).process.output());
        bot.restart(victim);
      }
    })();
    const resent = () => sl.socketDeliveries.filter((delivery) => delivery.retryAttempt > 0).length;
    const notFound = () =>
      [...killedOutput, ...bot.instances.map((instance) => instance.process.output())].reduce(
        (count, output) => count + output.split('\n').filter((line) => line.includes('a part that may have gone out was not found')).length,
        0,
      );
    const context = () => {
      const now = report();
      const redelivered = threadsResumedInDelivery(bot).length;
      return `SIGKILLed: ${kills.join('; ') || 'none yet'}; Slack sent ${resent()} envelopes again; ${redelivered} threads were resumed while delivering; a Telegram part not found by a successor ${notFound()} times\n${now.text}\n${bot.describe(now.troubled.slice(0, 4))}`;
    };
    await explained(Promise.all([writeAll(chats, 10, 5_000, sent), killing]), context);
    await waitUntil(() => report().missing.length === 0, 90_000, () => `every message to be answered\n${context()}`);

    // A late second answer (a turn redone after its lease moved) would come before an answer to a
    // message sent after it in the same chat, whose answers keep its order: one more message per
    // chat, and once each is answered, nothing earlier can still arrive.
    await bot.waitRunning(30_000);
    await Promise.all(
      chats.map(async (chat) => {
        const marker = `t${chat.thread}-m${(sent.get(chat.thread)?.length ?? 0) + 1}`;
        sent.set(chat.thread, [...(sent.get(chat.thread) ?? []), marker]);
        await chat.send(marker);
      }),
    );
    await waitUntil(() => report().missing.length === 0, 90_000, () => `every marker to be answered\n${context()}`);
    const final = report();
    expect(kills, context()).toHaveLength(3);
    expect(final.sent, context()).toBe(1_100);
    expect(final.missing, context()).toEqual([]);
    expect(final.disordered, context()).toEqual([]);
    // What docs/deployment.md allows: an answer shown twice only on Telegram, and only where a
    // successor looked for a part the killed instance may have posted and did not find it (then
    // it posts it again rather than lose it). Slack's metadata and the record of Telegram's posts
    // otherwise let a successor find what the killed instance posted.
    const telegramTwice = final.duplicated.filter((entry) => Number(/^t(\d+)-/.exec(entry)?.[1]) < TELEGRAM_CHATS);
    expect(final.duplicated.filter((entry) => !telegramTwice.includes(entry)), context()).toEqual([]);
    expect(telegramTwice.length, context()).toBeLessThanOrEqual(notFound());
  }, 240_000);

  it('an approval pressed after the instance that showed it was SIGKILLed: the tool runs once, the answer arrives once', async () => {
    let hits = 0;
    server = createServer((_request, response) => {
      hits += 1;
      response.end(PAGE);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
    const { bot, tg } = await startBot((request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return textReply(`Tool said: ${textOf(last).includes(PAGE) ? PAGE : textOf(last).slice(0, 300)}`, { latencyMs: MODEL_LATENCY_MS });
      return toolCallReply([{ name: 'http_fetch', arguments: { url } }], { latencyMs: MODEL_LATENCY_MS });
    });
    const shown = () => `the DM shows ${JSON.stringify(dmMessages(tg).map((message) => message.plainText))}, the page was fetched ${hits} times\n${bot.describe([String(OWNER.id)])}`;

    say(tg, 'please fetch the page');
    const prompt = await waitUntil(() => dmMessages(tg).find((message) => buttonsOf(message).length > 0), 30_000, () => `an approval prompt; ${shown()}`);
    // The instance whose post (or edit) put the buttons on that message; its proxy records it once the answer is back.
    const showedBy = () =>
      bot
        .exchanges('telegram')
        .filter((exchange) => /\/(sendMessage|editMessageText)$/.test(exchange.path) && bodyOf(exchange.requestBody).reply_markup !== undefined)
        .filter((exchange) => (bodyOf(exchange.responseBody).result as { message_id?: number } | undefined)?.message_id === prompt.messageId)
        .at(-1)?.instance;
    const shower = await waitUntil(showedBy, 5_000, () => `the instance that showed the prompt; ${shown()}`);
    await sleep(300);
    await bot.kill9(shower);
    press(tg, prompt, 'Approve');

    const answers = () => dmMessages(tg).filter((message) => message.plainText.includes('Tool said:'));
    await waitUntil(() => answers().length > 0, 60_000, () => `the answer after the approval (instance ${shower} showed the prompt and was SIGKILLed); ${shown()}`);
    // The thread's next turn begins only after this one ended on every instance: its prompt is the
    // marker after which no second fetch or second answer of the first turn can still come.
    say(tg, 'and once more');
    await waitUntil(() => dmMessages(tg).some((message) => message.messageId !== prompt.messageId && buttonsOf(message).length > 0), 30_000, () => `the next turn's prompt; ${shown()}`);
    expect(hits, `instance ${shower} showed the prompt and was SIGKILLed; ${shown()}`).toBe(1);
    expect(answers(), shown()).toHaveLength(1);
    expect(answers()[0]!.plainText).toBe(`Tool said: ${PAGE}`);
  }, 180_000);

  it('/policy disable http_fetch on one instance: no instance offers http_fetch to the model afterwards', async () => {
    const { bot, tg, sl } = await startBot(echoResponder(MODEL_LATENCY_MS));
    const sent = new Map<number, string[]>();
    const answered = (chats: ClusterChat[]) => waitUntil(() => answerReport(chats, sent).missing.length === 0, 60_000, () => `answers: ${answerReport(chats, sent).text}\n${bot.describe()}`);
    const first = [telegramChat(bot, tg, 0, telegramUser(0))];
    await explained(writeAll(first, 1, 0, sent), () => bot.describe());
    await answered(first);
    // Before the change the tool is offered, so its absence afterwards means something.
    expect(modelRequests(bot).length).toBeGreaterThan(0);
    expect(modelRequests(bot).every(offersFetch), bot.describe()).toBe(true);

    say(tg, '/policy disable http_fetch');
    await waitForDm(tg, 'Policy for http_fetch set to "disable"', () => bot.describe(), 30_000);
    const changedAt = Date.now();
    const since = () => modelRequests(bot).filter((exchange) => exchange.startedAt >= changedAt);
    // New threads, half on Telegram and half on Slack, until each instance has asked the model since the change.
    for (let round = 0; round < 6 && new Set(since().map((exchange) => exchange.instance)).size < IDS.length; round++) {
      const batch = Array.from({ length: 10 }, (_, i) => {
        const thread = 1 + round * 10 + i;
        return i % 2 === 0 ? telegramChat(bot, tg, thread, telegramUser(thread)) : slackChat(bot, sl, thread, slackUser(thread), slackDm(thread));
      });
      await explained(writeAll(batch, 1, 0, sent), () => bot.describe());
      await answered(batch);
    }
    const after = since();
    const byInstance = IDS.map((id) => `${id}: ${after.filter((exchange) => exchange.instance === id).length} requests`).join(', ');
    expect(after.filter(offersFetch).map((exchange) => exchange.instance), `requests that still offered http_fetch, by instance (${byInstance})\n${bot.describe()}`).toEqual([]);
    expect([...new Set(after.map((exchange) => exchange.instance))].sort(), `each instance asked the model after the change (${byInstance})\n${bot.describe()}`).toEqual([...IDS]);
  }, 180_000);
});
