/**
 * Three instances of the built product on one Redis store answer as one bot
 * (SPEC section 15), on the Telegram fake (one elected poller) and the Slack
 * fake in Socket Mode (a connection per instance, events spread over them):
 * - 1,000 messages over 100 threads, the Telegram poller SIGKILLed once a
 *   third of them are answered: every message answered once, and each chat's
 *   answers in the order it wrote;
 * - an instance SIGKILLed at a chosen moment of a turn, each reached by waiting
 *   for what the fakes see, never by time: while the model is asked (before it
 *   answers), while a tool call runs, right after the answer was delivered,
 *   after Telegram accepted the answer but before the instance heard back, and
 *   with an approval prompt open (pressed after the kill);
 * - a policy change made on one instance holds for every instance's next
 *   model request.
 *
 * What a kill may and may not do, as README.md ("A crash or restart drops
 * nothing") and docs/deployment.md (answers put on record part by part; on
 * Telegram a part is sent again only when its record cannot be found, as when
 * two posts of one chat are cut by the same kill, which cannot happen to the
 * one short post of each answer here) promise:
 * - no message is lost: each is answered, after the lease of the dead instance
 *   lapses and a survivor takes its threads up;
 * - none is answered twice, and each chat's answers keep its order;
 * - a turn cut while it ran (the model asked, a tool running) is continued by
 *   a survivor, and its person is told so in one line (RESTART_NOTICE), once;
 * - a turn cut once its answer was written is not run again: the answer on
 *   record is delivered, or found already posted, and no line is sent; the
 *   post accepted by Telegram before the instance heard back is found, not
 *   posted again;
 * - a tool call that was running is not run again: the model is told it was
 *   interrupted (INTERRUPTED_RESULT);
 * - an approval survives the instance that showed it: the tool runs once.
 * "Nothing more happened" is checked with a marker, not a wait: the chat sends
 * one more message after the kill; a thread's messages are answered in order by
 * whoever holds it, so a duplicate would show before the marker's answer.
 * Needs PINCER_TEST_REDIS_URL; uses its database 12, emptied before each test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INTERRUPTED_RESULT, RESTART_NOTICE } from '../../src/chat/turn-restart.js';
import { threadKeys } from '../../src/cluster/thread-storage.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmRequest, type FakeResponder } from '../fakes/llm/server.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type BotMessageState, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from './build.js';
import {
  answerReport,
  bodyOf,
  echoOf,
  echoResponder,
  flushDb,
  redisDbUrl,
  slackChat,
  startCluster,
  telegramChat,
  writeAll,
  type Cluster,
  type ClusterChat,
  type AnswerReport,
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

/** The owner's Telegram DM, the thread of the kill tests: its messages are `t1-m<seq>`. */
const KILL_THREAD = 1;
const OWNER_THREAD = `telegram:${OWNER.id}`;

/** A bot whose model and page a kill test can hold, and the owner's DM on it. */
interface KillRig {
  bot: Cluster;
  tg: FakeTelegram;
  /** With `holdModel`: resolves, with the asking instance, once the model holds the request that would answer the first message. */
  modelHeld: Promise<string>;
  releaseModel(): void;
  /** Resolves at the page's first fetch; with `holdPage` the page answers only once released. */
  pageHit: Promise<void>;
  releasePage(): void;
  /** How many times the page was fetched. */
  hits(): number;
  /** The owner writes `t1-m<next> text`; resolves once an instance received it. */
  write(text: string): Promise<void>;
  /** The owner writes one more message and waits until every message so far is answered. */
  marker(): Promise<void>;
  /** The approval prompt in the DM, once shown. */
  prompt(): Promise<BotMessageState>;
  /** The instance that holds the DM's thread lease on Redis now: the one running its turn. */
  holder(): Promise<string>;
  report(): AnswerReport;
  /** Every message answered, none twice, in order. */
  expectEachAnsweredOnce(): void;
  /** How many times the person was told a turn was taken up after a restart. */
  notices(): number;
  /** The answers that quote the tool's result. */
  answers(): string[];
  /** The instance behind each model request, in order. */
  askers(): string[];
  /** Whether a model request carried `text`. */
  modelSaw(text: string): boolean;
  context(): string;
}

/**
 * A model that echoes the DM's message ids (see `echoOf`); for a message that says "fetch" it calls
 * `http_fetch` of the page first, and quotes the tool's result after the echo.
 */
function killResponder(url: string, hold: (request: FakeLlmRequest, index: number) => Promise<void>): FakeResponder {
  return async (request, index) => {
    const messages = request.messages;
    const lastTool = messages.findLastIndex((message) => message.role === 'tool');
    const lastAnswer = messages.findLastIndex((message) => message.role === 'assistant' && !message.tool_calls);
    if (lastTool > lastAnswer) {
      const result = textOf(messages[lastTool]!);
      const said = result.includes(PAGE) ? PAGE : result.slice(0, 120);
      return textReply(`${echoOf(request)}; the tool said: ${said}`, { latencyMs: MODEL_LATENCY_MS });
    }
    const asked = messages.slice(lastAnswer + 1).some((message) => message.role === 'user' && textOf(message).includes('fetch'));
    if (asked) return toolCallReply([{ name: 'http_fetch', arguments: { url } }], { latencyMs: MODEL_LATENCY_MS });
    await hold(request, index);
    return textReply(echoOf(request), { latencyMs: MODEL_LATENCY_MS });
  };
}

/** Starts the three instances for a kill test, with a local page for `http_fetch`. */
async function startKillRig(options: { holdModel?: boolean; holdPage?: boolean }): Promise<KillRig> {
  let hits = 0;
  let pageHit!: () => void;
  const hitOnce = new Promise<void>((resolve) => (pageHit = resolve));
  let releasePage!: () => void;
  const pageReleased = options.holdPage ? new Promise<void>((resolve) => (releasePage = resolve)) : Promise.resolve();
  releasePage ??= () => undefined;
  server = createServer((_request: IncomingMessage, response: ServerResponse) => {
    hits += 1;
    pageHit();
    void pageReleased.then(() => response.end(PAGE));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;

  let held = false;
  let modelHeld!: (instance: string) => void;
  const heldOnce = new Promise<string>((resolve) => (modelHeld = resolve));
  let releaseModel!: () => void;
  const modelReleased = new Promise<void>((resolve) => (releaseModel = resolve));
  const instanceOf = (index: number) => String(llm?.requestHeaders[index]?.['x-pincer-instance'] ?? '?');
  const hold = async (request: FakeLlmRequest, index: number) => {
    if (!options.holdModel || held || !echoOf(request).includes(`t${KILL_THREAD}-m1`)) return;
    held = true;
    modelHeld(instanceOf(index));
    await modelReleased;
  };
  const { bot, tg } = await startBot(killResponder(url, hold));
  const chat = telegramChat(bot, tg, KILL_THREAD, OWNER.id);
  const sent = new Map<number, string[]>();
  const write = (text: string) => {
    const id = `t${KILL_THREAD}-m${(sent.get(KILL_THREAD) ?? []).length + 1}`;
    sent.set(KILL_THREAD, [...(sent.get(KILL_THREAD) ?? []), id]);
    return chat.send(`${id} ${text}`);
  };
  const report = () => answerReport([chat], sent);
  const context = () => `the DM shows ${JSON.stringify(dmMessages(tg).map((message) => message.plainText))}; the page was fetched ${hits} times; ${report().text}\n${bot.describe([String(OWNER.id)])}`;
  return {
    bot,
    tg,
    modelHeld: heldOnce,
    releaseModel,
    pageHit: hitOnce,
    releasePage,
    hits: () => hits,
    write,
    async marker() {
      await write('marker');
      await waitUntil(() => report().missing.length === 0, 60_000, () => `every message up to the marker to be answered; ${context()}`);
    },
    prompt: () => waitUntil(() => dmMessages(tg).find((message) => buttonsOf(message).length > 0), 30_000, () => `an approval prompt; ${context()}`),
    async holder() {
      const redis = new Redis(STORE, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        const lease = await redis.get(threadKeys(OWNER_THREAD).lease);
        if (!lease) throw new Error(`no instance holds ${OWNER_THREAD}; ${context()}`);
        return lease.split('#')[0]!;
      } finally {
        redis.disconnect();
      }
    },
    report,
    expectEachAnsweredOnce() {
      const final = report();
      expect(final.missing, context()).toEqual([]);
      expect(final.duplicated, context()).toEqual([]);
      expect(final.disordered, context()).toEqual([]);
    },
    notices: () => dmMessages(tg).filter((message) => message.plainText === RESTART_NOTICE).length,
    answers: () => dmMessages(tg).map((message) => message.plainText).filter((text) => text.includes('the tool said:')),
    askers: () => (llm?.requestHeaders ?? []).map((_, index) => instanceOf(index)),
    modelSaw: (text) => (llm?.requests ?? []).some((request) => request.messages.some((message) => textOf(message).includes(text))),
    context,
  };
}

describe.skipIf(!REDIS)(`three instances on one Redis store${SKIPPED}`, () => {
  it('1,000 messages over 100 threads, the Telegram poller SIGKILLed once a third are answered: each answered once, each chat in order', async () => {
    const { bot, tg, sl } = await startBot(echoResponder(MODEL_LATENCY_MS));
    const chats: ClusterChat[] = [
      ...Array.from({ length: TELEGRAM_CHATS }, (_, i) => telegramChat(bot, tg, i, telegramUser(i))),
      ...Array.from({ length: 20 }, (_, i) => slackChat(bot, sl, 70 + i, slackUser(70 + i), slackDm(70 + i))),
      ...Array.from({ length: 10 }, (_, i) => slackChat(bot, sl, 90 + i, slackUser(90 + i), TEAM_CHANNEL, true)),
    ];
    const sent = new Map<number, string[]>();
    let victim = 'b';
    let answeredAtKill = 0;
    const report = () => answerReport(chats, sent);
    // Mid-run by what the fakes show, not by time: once a third of the 1,000 are answered, while the
    // rest are still being written. The elected Telegram poller is the worst one to lose: every
    // Telegram thread waits for the next election.
    const killing = waitUntil(() => report().answered >= 333, 90_000, () => `a third of the messages to be answered; ${report().text}`).then(async () => {
      answeredAtKill = report().answered;
      victim = bot.poller() ?? 'b';
      await bot.kill9(victim);
    });
    const resent = () => sl.socketDeliveries.filter((delivery) => delivery.retryAttempt > 0).length;
    const context = () => {
      const redelivered = threadsResumedInDelivery(bot).length;
      return `instance ${victim} was SIGKILLed with ${answeredAtKill} messages answered; Slack sent ${resent()} envelopes again; ${redelivered} threads were resumed while delivering\n${report().text}\n${bot.describe(report().troubled.slice(0, 4))}`;
    };
    await explained(Promise.all([writeAll(chats, 10, 5_000, sent), killing]), context);
    await waitUntil(() => report().missing.length === 0, 90_000, () => `every message to be answered\n${context()}`);
    expect(report().sent, context()).toBe(1_000);

    // An answer given twice may come late (a turn redone after the lease moved). Instead of waiting
    // for nothing more, each chat writes one more message: its thread is answered in order, so a
    // late repeat shows before that marker's answer (and out of order if after).
    await explained(
      Promise.all(
        chats.map((chat) => {
          const text = `t${chat.thread}-m${(sent.get(chat.thread) ?? []).length + 1}`;
          sent.set(chat.thread, [...(sent.get(chat.thread) ?? []), text]);
          return chat.send(text);
        }),
      ),
      context,
    );
    await waitUntil(() => report().missing.length === 0, 60_000, () => `every chat's marker to be answered\n${context()}`);
    const final = report();
    expect(final.sent, context()).toBe(1_100);
    expect(final.missing, context()).toEqual([]);
    expect(final.disordered, context()).toEqual([]);
    // No answer shows twice on any platform, including a part the killed instance's platform
    // accepted just before the kill: the successor finds it (Slack's metadata, Discord's nonce,
    // Telegram's record of posts, channels/telegram/sent-trail.ts) and does not post it again.
    expect(final.duplicated, context()).toEqual([]);
  }, 180_000);

  describe('an instance SIGKILLed at a chosen moment of a turn', () => {
    it('while the model is asked, before it answers: a survivor continues the turn, tells the person once, answers once', async () => {
      const rig = await startKillRig({ holdModel: true });
      await rig.write('hello');
      const asker = await rig.modelHeld;
      await rig.bot.kill9(asker);
      rig.releaseModel();
      await rig.marker();
      rig.expectEachAnsweredOnce();
      expect(rig.notices(), rig.context()).toBe(1);
      // The survivor asked the model again; the killed instance never had the answer to send.
      expect(rig.askers().filter((instance) => instance !== asker).length, rig.context()).toBeGreaterThan(0);
    }, 60_000);

    it('while a tool call runs: the call is not run again, the model is told it was interrupted, the person is told once', async () => {
      const rig = await startKillRig({ holdPage: true });
      await rig.write('please fetch the page');
      press(rig.tg, await rig.prompt(), 'Approve');
      await rig.pageHit;
      // The turn runs on the instance that holds its thread's lease.
      const runner = await rig.holder();
      await rig.bot.kill9(runner);
      rig.releasePage();
      await rig.marker();
      rig.expectEachAnsweredOnce();
      expect(rig.hits(), rig.context()).toBe(1);
      expect(rig.modelSaw(INTERRUPTED_RESULT), rig.context()).toBe(true);
      expect(rig.notices(), rig.context()).toBe(1);
    }, 60_000);

    it('right after its answer was delivered: the answer is not sent again', async () => {
      const rig = await startKillRig({});
      await rig.write('hello');
      // The answer shown, and its post back through the instance's proxy: the instance has heard back.
      const answerer = await waitUntil(() => rig.report().missing.length === 0 && rig.bot.telegramAnswerer(OWNER.id), 30_000, () => `the answer; ${rig.context()}`);
      // At once: the instance may not yet have put the part on record, nor closed the turn.
      await rig.bot.kill9(answerer);
      await rig.marker();
      rig.expectEachAnsweredOnce();
      // A survivor that takes up the turn before it was closed delivers the answer on record: no line.
      expect(rig.notices(), rig.context()).toBe(0);
    }, 60_000);

    it('after Telegram accepted its answer, before the instance heard back: a survivor finds the post and does not send it again', async () => {
      const rig = await startKillRig({});
      // The post is made and recorded by the fake, its answer kept from the instance: the part is not on
      // record as sent (docs/deployment.md), the case channels/telegram/sent-trail.ts is for.
      const answerer = rig.bot.holdTelegramAnswer((path, body) => path.endsWith('/sendMessage') && String(bodyOf(body).text ?? '').includes('echo: t1-m1'));
      await rig.write('hello');
      const victim = await answerer;
      expect(rig.report().missing, rig.context()).toEqual([]);
      await rig.bot.kill9(victim);
      await rig.marker();
      rig.expectEachAnsweredOnce();
      // The turn was still open, delivering: a survivor finishes the delivery, with no line.
      expect(rig.notices(), rig.context()).toBe(0);
    }, 60_000);

    it('with an approval prompt open, pressed after the kill: the tool runs once, the answer arrives once', async () => {
      const rig = await startKillRig({});
      await rig.write('please fetch the page');
      const prompt = await rig.prompt();
      // The instance whose post (or edit) put the buttons on that message; its proxy records it once the answer is back.
      const showedBy = () =>
        rig.bot
          .exchanges('telegram')
          .filter((exchange) => /\/(sendMessage|editMessageText)$/.test(exchange.path) && bodyOf(exchange.requestBody).reply_markup !== undefined)
          .filter((exchange) => (bodyOf(exchange.responseBody).result as { message_id?: number } | undefined)?.message_id === prompt.messageId)
          .at(-1)?.instance;
      const shower = await waitUntil(showedBy, 5_000, () => `the instance that showed the prompt; ${rig.context()}`);
      await rig.bot.kill9(shower);
      press(rig.tg, prompt, 'Approve');
      await rig.marker();
      rig.expectEachAnsweredOnce();
      expect(rig.hits(), `instance ${shower} showed the prompt and was SIGKILLed; ${rig.context()}`).toBe(1);
      // The marker may be read by the turn the press resumed (then both are echoed in its answer).
      expect(rig.answers(), rig.context()).toHaveLength(1);
      expect(rig.answers()[0], rig.context()).toMatch(new RegExp(`^echo: t1-m1( t1-m2)?; the tool said: ${PAGE}$`));
    }, 60_000);
  });

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
