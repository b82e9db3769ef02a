/**
 * Several `node dist/main.js` on one Redis store, as one bot, for the cluster
 * acceptance test and bench/cluster. Each instance reaches the fakes (model,
 * Telegram, Slack Web API, Discord REST) through a proxy of its own that records every
 * exchange, so that what an instance did (polled Telegram, showed a prompt,
 * asked the model) is known without relying on its log's wording.
 * Also here: a fake model that echoes the messages it is shown, people who
 * write numbered messages (`t<thread>-m<seq>`), and the check that each was
 * answered once and in order.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { Redis } from 'ioredis';
import type { FakeDiscord, FakeUser as DiscordUser } from '../fakes/discord/index.js';
import { textReply, type FakeLlm, type FakeLlmRequest, type FakeResponder } from '../fakes/llm/server.js';
import { messageText, readableText, type FakeSlack } from '../fakes/slack/index.js';
import type { FakeTelegram } from '../fakes/telegram/index.js';
import { textOf } from './model.js';
import { startPincer, tempDir, waitUntil, type PincerProcess } from './pincer.js';

// ---- Redis ----

/** `base` (a redis:// URL) with database `db`. */
export function redisDbUrl(base: string, db: number): string {
  const url = new URL(base);
  url.pathname = `/${db}`;
  return url.toString();
}

/** A suite's own database of the test Redis (PINCER_TEST_REDIS_URL), and why its tests skip without one. */
export function testRedisDb(db: number): { available: boolean; skip: string; url: () => string } {
  const base = process.env.PINCER_TEST_REDIS_URL;
  return {
    available: Boolean(base),
    skip: base ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)',
    url: () => redisDbUrl(base!, db),
  };
}

/**
 * Holds database `db` of the test Redis for this test file, against other
 * files that use the same one (there are more suites than databases): waits
 * while another process holds it, takes over a hold whose process is gone.
 * Resolves with the release.
 */
export async function holdRedisDb(db: number, timeoutMs = 900_000): Promise<() => void> {
  const path = join(tmpdir(), `pincer-test-redis-db-${db}.lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(path, 'utf8').trim() || '0');
    if (holder === process.pid || !alive(holder)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`Redis database ${db} is still held by process ${holder}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Empties the database of `url`; rejects when Redis does not answer within `timeoutMs`. */
export async function flushDb(url: string, timeoutMs = 2_000): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let cause: Error | undefined;
  redis.on('error', (error: Error) => (cause = error));
  try {
    await redis.connect();
    await redis.flushdb();
  } catch (error) {
    throw cause ?? error;
  } finally {
    redis.disconnect();
  }
}

// ---- proxies ----

/** One request an instance made through its proxy, and the answer. */
export interface Exchange {
  instance: string;
  path: string;
  requestBody: string;
  status: number;
  responseBody: string;
  startedAt: number;
}

/** Picks the request whose answer a proxy keeps from its instance: by path and request body. */
export type AnswerMatch = (path: string, requestBody: string) => boolean;

/** A recording reverse proxy in front of one fake, for one instance. */
export interface TaggingProxy {
  readonly url: string;
  readonly exchanges: Exchange[];
  /**
   * The next answer to a request that `match` picks reaches the fake's side
   * (the fake did the work, the exchange is recorded) but never the instance:
   * the moment between a platform accepting a post and the instance hearing
   * of it. `onHeld` is called once that answer is back from the fake.
   */
  holdAnswer(match: AnswerMatch, onHeld: () => void): void;
  close(): Promise<void>;
}

/**
 * Forwards every request to `target` (streamed answers stay streamed) and
 * records it; a client that goes away (a killed instance) cancels the upstream
 * request, so a held long poll is released at the fake too.
 */
export async function startTaggingProxy(target: string, instance: string, onExchange?: (exchange: Exchange) => void): Promise<TaggingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const exchanges: Exchange[] = [];
  let hold: { match: AnswerMatch; onHeld: () => void } | undefined;
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const startedAt = Date.now();
    const headers = { ...req.headers, host: upstream.host, 'x-pincer-instance': instance };
    const held = hold?.match(req.url ?? '/', body.toString('utf8')) ? hold : undefined;
    if (held) hold = undefined;
    const outgoing = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      if (!held) res.writeHead(answer.statusCode ?? 502, answer.headers);
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (!held) res.write(chunk);
      });
      answer.on('error', () => res.destroy());
      answer.on('end', () => {
        if (held) held.onHeld();
        else res.end();
        const exchange: Exchange = {
          instance,
          path: req.url ?? '/',
          requestBody: body.toString('utf8'),
          status: answer.statusCode ?? 0,
          responseBody: Buffer.concat(chunks).toString('utf8'),
          startedAt,
        };
        exchanges.push(exchange);
        onExchange?.(exchange);
      });
    });
    outgoing.on('error', () => res.destroy());
    res.on('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    outgoing.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    holdAnswer(match, onHeld) {
      hold = { match, onHeld };
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}

// ---- the cluster ----

/** What {@link startCluster} needs. */
export interface ClusterOptions {
  ids: readonly string[];
  /** A redis:// URL with its database. */
  storeUrl: string;
  llm: FakeLlm;
  telegram?: FakeTelegram;
  slack?: FakeSlack;
  /** Discord: REST goes through the instance's proxy; the gateway is reached directly (the fake names itself in `GET /gateway/bot`). */
  discord?: FakeDiscord;
  /** The YAML of PINCER_CONFIG. */
  config: string;
  /** More environment, e.g. PINCER_OWNERS. */
  env?: Record<string, string>;
}

/** One instance and its proxies. */
export interface ClusterInstance {
  readonly id: string;
  readonly process: PincerProcess;
  readonly llm: TaggingProxy;
  readonly telegram?: TaggingProxy;
  readonly slack?: TaggingProxy;
  readonly discord?: TaggingProxy;
  /** The environment it was started with (a restart uses it again). */
  readonly env: Record<string, string>;
}

/** Instances sharing one store, and what they did. */
export class Cluster {
  /** Telegram update ids handed to an instance (in a getUpdates answer it received). */
  readonly delivered = new Set<number>();
  readonly instances: ClusterInstance[] = [];

  /** The instance named `id`. */
  get(id: string): ClusterInstance {
    const found = this.instances.find((instance) => instance.id === id);
    if (!found) throw new Error(`no instance ${id}`);
    return found;
  }

  /** Waits until every instance says it runs. */
  async waitRunning(timeoutMs = 30_000): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.process.waitForOutput('pincer is running', timeoutMs)));
  }

  /** Every exchange with one fake, of every instance, oldest first. */
  exchanges(fake: 'llm' | 'telegram' | 'slack' | 'discord'): Exchange[] {
    return this.instances.flatMap((instance) => instance[fake]?.exchanges ?? []).sort((a, b) => a.startedAt - b.startedAt);
  }

  /** The instance that polled Telegram last: the elected poller while it lives. */
  poller(): string | undefined {
    return this.exchanges('telegram').filter((exchange) => exchange.path.endsWith('/getUpdates')).at(-1)?.instance;
  }

  /** The instance that last posted or edited a message in the Telegram chat `chatId`. */
  telegramAnswerer(chatId: number): string | undefined {
    const posts = this.exchanges('telegram').filter((exchange) => /\/(sendMessage|editMessageText)$/.test(exchange.path));
    return posts.filter((exchange) => String(bodyOf(exchange.requestBody).chat_id) === String(chatId)).at(-1)?.instance;
  }

  /** The instance that last posted or edited a message in the Slack conversation `channel`; with `threadTs`, that posted in that thread. */
  slackAnswerer(channel: string, threadTs?: string): string | undefined {
    const posts = this.exchanges('slack').filter((exchange) => /\/chat\.(postMessage|update)$/.test(exchange.path));
    const here = (body: Record<string, unknown>) => body.channel === channel && (threadTs === undefined || body.thread_ts === threadTs);
    return posts.filter((exchange) => here(bodyOf(exchange.requestBody))).at(-1)?.instance;
  }

  /** The instance that last posted or edited a message in the Discord channel `channelId`. */
  discordAnswerer(channelId: string): string | undefined {
    const path = `/channels/${channelId}/messages`;
    return this.exchanges('discord').filter((exchange) => exchange.path.includes(path)).at(-1)?.instance;
  }

  /** SIGTERM (a graceful stop, as a rolling restart does it), then the exit; the exit code. */
  async terminate(id: string, timeoutMs = 30_000): Promise<number | null> {
    const { process: pincer } = this.get(id);
    process.kill(pincer.pid, 'SIGTERM');
    return (await pincer.waitForExit(timeoutMs)).code;
  }

  /** Starts an ended instance again: the same environment, data folder and proxies. */
  restart(id: string): ClusterInstance {
    const index = this.instances.findIndex((instance) => instance.id === id);
    const old = this.instances[index];
    if (!old) throw new Error(`no instance ${id}`);
    if (old.process.running()) throw new Error(`instance ${id} still runs`);
    const again = { ...old, process: startPincer(old.env, { dataDir: old.process.dataDir }) };
    this.instances[index] = again;
    return again;
  }

  /**
   * Keeps the next answer of the Telegram fake to a request `match` picks, from
   * whichever instance makes it, from reaching that instance (see
   * {@link TaggingProxy.holdAnswer}). Resolves with the instance once the fake has answered.
   */
  holdTelegramAnswer(match: AnswerMatch): Promise<string> {
    return new Promise((resolve) => {
      let taken = false;
      for (const instance of this.instances) {
        instance.telegram?.holdAnswer(
          (path, body) => !taken && match(path, body) && (taken = true),
          () => resolve(instance.id),
        );
      }
    });
  }

  /** SIGKILL, then the exit; returns when the process is gone. */
  async kill9(id: string): Promise<void> {
    const { process: pincer } = this.get(id);
    process.kill(pincer.pid, 'SIGKILL');
    await pincer.waitForExit(5_000);
  }

  /**
   * What each instance did, for failure messages: its counts, its last warnings and errors, its
   * log lines that name one of `focus` (thread keys), and the last `lines` lines it printed.
   */
  describe(focus: readonly string[] = [], lines = 12): string {
    return this.instances
      .map((instance) => {
        const count = (proxy: TaggingProxy | undefined, pattern: RegExp) => proxy?.exchanges.filter((exchange) => pattern.test(exchange.path)).length ?? 0;
        const did = `model requests ${count(instance.llm, /chat\/completions/)}, getUpdates ${count(instance.telegram, /getUpdates$/)}, telegram posts ${count(instance.telegram, /(sendMessage|editMessageText)$/)}, slack posts ${count(instance.slack, /chat\.(postMessage|update)$/)}, discord posts ${count(instance.discord, /\/messages(\/\d+)?$/)}`;
        const output = instance.process.output().split('\n');
        const warnings = output.filter((line) => /"level":[456]0/.test(line)).slice(-10);
        const about = focus.length ? output.filter((line) => focus.some((key) => line.includes(key))).slice(-20) : [];
        const sections = [`--- warnings and errors (last ${warnings.length}):`, ...warnings, `--- about ${focus.join(', ') || 'no thread'}:`, ...about, '--- last lines:', ...output.slice(-lines)];
        return `=== instance ${instance.id} (${instance.process.running() ? 'running' : 'ended'}): ${did}\n${sections.join('\n')}`;
      })
      .join('\n');
  }

  /** Closes the proxies (the processes are ended by `cleanUp()`). */
  async close(): Promise<void> {
    await Promise.all(this.instances.flatMap((instance) => [instance.llm, instance.telegram, instance.slack, instance.discord]).map((proxy) => proxy?.close()));
  }
}

/** Starts the instances, each with its own proxies and data folder; they share the store and the config. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const cluster = new Cluster();
  const configFile = join(tempDir('pincer-cluster-config-'), 'pincer.yaml');
  writeFileSync(configFile, options.config);
  const noteDelivered = (exchange: Exchange) => {
    if (!exchange.path.endsWith('/getUpdates')) return;
    const result = (bodyOf(exchange.responseBody).result ?? []) as { update_id: number }[];
    for (const update of result) cluster.delivered.add(update.update_id);
  };
  for (const id of options.ids) {
    const llm = await startTaggingProxy(new URL(options.llm.url).origin, id);
    const telegram = options.telegram ? await startTaggingProxy(options.telegram.apiRoot, id, noteDelivered) : undefined;
    const slack = options.slack ? await startTaggingProxy(new URL(options.slack.apiUrl).origin, id) : undefined;
    const discord = options.discord ? await startTaggingProxy(new URL(options.discord.apiUrl).origin, id) : undefined;
    const env: Record<string, string> = {
      PINCER_STORE_URL: options.storeUrl,
      PINCER_INSTANCE_ID: id,
      PINCER_CONFIG: configFile,
      OPENAI_BASE_URL: `${llm.url}/v1`,
      PINCER_MODEL: 'fake-model',
      ...(options.telegram && telegram ? { TELEGRAM_BOT_TOKEN: options.telegram.token, TELEGRAM_API_ROOT: telegram.url } : {}),
      ...(options.slack && slack ? { SLACK_BOT_TOKEN: options.slack.botToken, SLACK_APP_TOKEN: options.slack.appToken, SLACK_API_URL: `${slack.url}/api/` } : {}),
      ...(options.discord && discord ? { DISCORD_BOT_TOKEN: options.discord.token, DISCORD_API_URL: `${discord.url}${new URL(options.discord.apiUrl).pathname}` } : {}),
      ...options.env,
    };
    cluster.instances.push({ id, env, process: startPincer(env), llm, ...(telegram ? { telegram } : {}), ...(slack ? { slack } : {}), ...(discord ? { discord } : {}) });
  }
  return cluster;
}

/** A JSON or form body as an object ({} when it is neither). */
export function bodyOf(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return Object.fromEntries(new URLSearchParams(text));
  }
}

// ---- the echoing model ----

const MESSAGE_ID = /\bt\d+-m\d+\b/g;

/** The message ids (`t<thread>-m<seq>`) in a text, in order. */
export function idsIn(text: string): string[] {
  return text.match(MESSAGE_ID) ?? [];
}

/**
 * A model that answers `echo: <ids>` with every message id the request's user
 * messages carry and its assistant messages do not yet (so several messages
 * answered in one turn are echoed together, and none twice in one history).
 */
export function echoResponder(latencyMs: number): FakeResponder {
  return (request: FakeLlmRequest) => textReply(echoOf(request), { latencyMs });
}

/** The echo the model gives to a request. */
export function echoOf(request: FakeLlmRequest): string {
  const said = request.messages.filter((message) => message.role === 'user').flatMap((message) => idsIn(textOf(message)));
  const echoed = new Set(request.messages.filter((message) => message.role === 'assistant').flatMap((message) => idsIn(textOf(message))));
  const fresh = [...new Set(said)].filter((id) => !echoed.has(id));
  return fresh.length ? `echo: ${fresh.join(' ')}` : 'echo: nothing new';
}

/** The ids echoed in a chat's replies, in order, repeats kept. */
export function echoesIn(replies: readonly string[]): string[] {
  return replies.flatMap((reply) => [...reply.matchAll(/echo:((?:\s+t\d+-m\d+)+)/g)].flatMap((match) => idsIn(match[1]!)));
}

// ---- people writing ----

/** One conversation the test writes in. */
export interface ClusterChat {
  readonly thread: number;
  readonly label: string;
  /** What the instances' logs call this conversation (a chat id, a channel, a thread's ts). */
  logKey(): string;
  /** Writes `text`; resolves once the platform handed it to the bot (fetched, or acknowledged). */
  send(text: string): Promise<void>;
  /** The bot's replies in this conversation, as they read now, oldest first. */
  replies(): string[];
  /** The instance that posted (or edited) the latest reply here. */
  answerer(): string | undefined;
}

/** A Telegram DM with user `userId`; delivered once an instance received the update. */
export function telegramChat(cluster: Cluster, fake: FakeTelegram, thread: number, userId: number): ClusterChat {
  const from: User = { id: userId, is_bot: false, first_name: `P${userId}` };
  const chat = { id: userId, type: 'private', first_name: from.first_name } as Chat;
  return {
    thread,
    label: `telegram DM ${userId}`,
    logKey: () => String(userId),
    async send(text) {
      const { updateId } = fake.sendUserMessage({ chat, from, text });
      await waitUntil(() => cluster.delivered.has(updateId), 60_000, () => `update ${updateId} (${text}) to reach an instance`);
    },
    replies: () => fake.chatMessages(chat.id).map((message) => message.plainText),
    answerer: () => cluster.telegramAnswerer(chat.id),
  };
}

/** A Slack DM (`channel`, of `user`), or with `mention` a thread that a mention starts in a channel. */
export function slackChat(cluster: Cluster, fake: FakeSlack, thread: number, user: string, channel: string, mention = false): ClusterChat {
  let root: string | undefined;
  return {
    thread,
    label: mention ? `slack thread of ${user} in ${channel}` : `slack DM ${channel}`,
    logKey: () => (mention ? (root ?? channel) : channel),
    async send(text) {
      const sent = await fake.sendMessage({ channel, user, text, mention, ackTimeoutMs: 60_000, ...(root ? { threadTs: root } : {}) });
      if (mention) root ??= sent.ts;
    },
    replies: () =>
      fake
        .botMessages(channel)
        .filter((message) => !mention || (root !== undefined && message.thread_ts === root))
        .map((message) => readableText(messageText(message))),
    answerer: () => cluster.slackAnswerer(channel, mention ? (root ?? '') : undefined),
  };
}

/** A Discord DM with `user`; the gateway dispatches a message at once (there is no acknowledgement to wait for). */
export function discordChat(cluster: Cluster, fake: FakeDiscord, thread: number, user: DiscordUser): ClusterChat {
  const dm = fake.dmChannel(user);
  return {
    thread,
    label: `discord DM ${dm.id}`,
    logKey: () => dm.id,
    send(text) {
      fake.userMessage({ channelId: dm.id, author: user, content: text });
      return Promise.resolve();
    },
    replies: () =>
      fake
        .messagesIn(dm.id)
        .filter((message) => message.authorId === fake.bot.id && !message.deleted)
        .map((message) => message.content),
    answerer: () => cluster.discordAnswerer(dm.id),
  };
}

/**
 * Each chat writes `perThread` messages (`t<thread>-m<seq>`), its next one once
 * the previous one was delivered and not before its slot: the sends are spread
 * over `spreadMs`. Every text is added to `sent` before it is written.
 */
export async function writeAll(chats: readonly ClusterChat[], perThread: number, spreadMs: number, sent: Map<number, string[]>): Promise<void> {
  const start = Date.now();
  const gap = spreadMs / perThread;
  await Promise.all(
    chats.map(async (chat, index) => {
      for (let seq = 1; seq <= perThread; seq++) {
        const slot = start + (seq - 1) * gap + (index * gap) / chats.length;
        if (slot > Date.now()) await new Promise((resolve) => setTimeout(resolve, slot - Date.now()));
        const text = `t${chat.thread}-m${seq}`;
        sent.set(chat.thread, [...(sent.get(chat.thread) ?? []), text]);
        await chat.send(text);
      }
    }),
  );
}

/** How the messages sent were answered. */
export interface AnswerReport {
  sent: number;
  /** Ids answered at least once. */
  answered: number;
  missing: string[];
  /** Ids echoed more than once in their chat. */
  duplicated: string[];
  /** Chats whose echoes are out of order, with what they show. */
  disordered: string[];
  /** The {@link ClusterChat.logKey} of each chat with a message missing, twice or out of order. */
  troubled: string[];
  /** A summary for failure messages. */
  text: string;
}

/** Compares what was sent with what each chat shows. */
export function answerReport(chats: readonly ClusterChat[], sent: ReadonlyMap<number, readonly string[]>): AnswerReport {
  const report: AnswerReport = { sent: 0, answered: 0, missing: [], duplicated: [], disordered: [], troubled: [], text: '' };
  for (const chat of chats) {
    const ids = sent.get(chat.thread) ?? [];
    // Only this chat's own ids: a channel thread may be shown other threads' messages as context.
    const echoes = echoesIn(chat.replies()).filter((id) => id.startsWith(`t${chat.thread}-m`));
    const counts = new Map<string, number>();
    for (const id of echoes) counts.set(id, (counts.get(id) ?? 0) + 1);
    report.sent += ids.length;
    report.answered += ids.filter((id) => counts.has(id)).length;
    report.missing.push(...ids.filter((id) => !counts.has(id)));
    report.duplicated.push(...[...counts].filter(([, count]) => count > 1).map(([id, count]) => `${id} x${count}`));
    const order = [...new Set(echoes)].map((id) => Number(id.split('-m')[1]));
    const disordered = order.some((seq, i) => i > 0 && seq < order[i - 1]!);
    if (disordered) report.disordered.push(`${chat.label}: ${[...new Set(echoes)].join(' ')}`);
    if (disordered || ids.some((id) => counts.get(id) !== 1)) report.troubled.push(chat.logKey());
  }
  const head = (list: string[]) => `${list.length}${list.length ? `: ${list.slice(0, 40).join(', ')}${list.length > 40 ? ', ...' : ''}` : ''}`;
  report.text = `sent ${report.sent}, answered ${report.answered}; missing ${head(report.missing)}; answered twice ${head(report.duplicated)}; out of order ${head(report.disordered)}`;
  return report;
}
