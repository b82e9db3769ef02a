/**
 * bench/reply-latency: how long a person waits for the answer beyond the
 * model's own latency, on each platform, in the production configuration
 * (createApp with the configured channels and their default options: the
 * Telegram throttler on, streaming on).
 *
 * Each platform's fake (the real grammY / discord.js / Bolt client talking HTTP
 * and WebSocket to it) delivers a person's message; the fake model answers after
 * a fixed latency L. Timed: from the moment the fake hands the message to the
 * bot (the getUpdates response carrying it is written, the gateway
 * MESSAGE_CREATE is sent, the Socket Mode envelope is sent) to the moment the
 * fake receives the answer (sendMessage, POST /channels/:id/messages,
 * chat.postMessage). Two workloads: distinct chats (one message each, arriving
 * at 20 a second, under Telegram's 30 messages a second overall), and repeated
 * messages in the same chat (each sent a little over a second after the
 * previous answer, so Telegram's one message a second per chat is not what is
 * measured).
 *
 * Baseline, in the same run: the model's latency as a plain openai SDK client
 * sees it, replaying one of pincer's own requests (same messages, tools,
 * max_tokens, streaming) to the same fake model server. `p50 - model` is the
 * time pincer and the platform round trip add.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { createApp, type App } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { startFakeDiscord, type FakeDiscord, type FakeUser, type RecordedRequest } from '../test/fakes/discord/index.js';
import { startFakeLlm, textReply, type FakeLlm, type FakeLlmRequest } from '../test/fakes/llm/server.js';
import { startFakeSlack, type ApiCall, type FakeSlack } from '../test/fakes/slack/index.js';
import { startFakeTelegram, type CallRecord, type FakeTelegram } from '../test/fakes/telegram/index.js';

/** One platform with its fake, as the benchmark drives it. */
interface Rig {
  readonly name: string;
  /** Configuration keys that point the channel at the fake. */
  readonly config: Record<string, unknown>;
  /** Makes chat `chat` ready (users, DM channels). */
  prepare(chat: number): void;
  /** Person `chat` writes `text` in their DM; `delivered(id)` must be called when the fake hands it over. */
  write(chat: number, text: string): void;
  close(): Promise<void>;
}

/** Message id -> moment it was handed to the bot / moment the answer reached the fake. */
interface Clock {
  delivered: Map<string, number>;
  answered: Map<string, number>;
}

const MESSAGE = /\bm(\d+)\b/;
const idOf = (text: unknown) => MESSAGE.exec(String(text ?? ''))?.[0];

/** Instruments `array.push` so each pushed item is seen the moment it is recorded. */
function onPush<T>(array: T[], seen: (item: T) => void): void {
  const push = array.push.bind(array);
  array.push = (...items: T[]) => {
    for (const item of items) seen(item);
    return push(...items);
  };
}

async function telegramRig(clock: Clock): Promise<Rig> {
  const fake: FakeTelegram = await startFakeTelegram();
  const updates = new Map<number, string>();
  const handle = fake.handle.bind(fake);
  // The moment a getUpdates response carrying the message is written.
  fake.handle = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.endsWith('/getUpdates')) {
      const end = res.end.bind(res) as (chunk: string) => ServerResponse;
      (res as { end: unknown }).end = (chunk: string) => {
        const at = performance.now();
        const body = JSON.parse(chunk) as { result?: { update_id: number }[] };
        for (const update of body.result ?? []) {
          const id = updates.get(update.update_id);
          if (id) clock.delivered.set(id, at);
        }
        return end(chunk);
      };
    }
    return handle(req, res);
  };
  onPush<CallRecord>(fake.calls, (call) => {
    const id = call.method === 'sendMessage' ? idOf(call.payload.text) : undefined;
    if (id && !clock.answered.has(id)) clock.answered.set(id, performance.now());
  });
  const user = (chat: number) => ({ id: 1_000_000 + chat, is_bot: false, first_name: `P${chat}` });
  return {
    name: 'telegram',
    config: { telegram: { token: fake.token, apiRoot: fake.apiRoot } },
    prepare: () => {},
    write: (chat, text) => {
      const from = user(chat);
      const sent = fake.sendUserMessage({ chat: { id: from.id, type: 'private', first_name: from.first_name }, from, text });
      updates.set(sent.updateId, idOf(text)!);
    },
    close: () => fake.close(),
  };
}

async function discordRig(clock: Clock): Promise<Rig> {
  const fake: FakeDiscord = await startFakeDiscord();
  const people = new Map<number, { user: FakeUser; channelId: string }>();
  onPush<RecordedRequest>(fake.requests, (request) => {
    const id = request.method === 'POST' && request.path.endsWith('/messages') ? idOf(request.body?.content) : undefined;
    if (id && !clock.answered.has(id)) clock.answered.set(id, performance.now());
  });
  return {
    name: 'discord',
    config: { discord: { token: fake.token, apiUrl: fake.apiUrl } },
    prepare: (chat) => {
      const user = fake.addMember(`P${chat}`);
      people.set(chat, { user, channelId: fake.dmChannel(user).id });
    },
    write: (chat, text) => {
      const person = people.get(chat)!;
      // userMessage sends the MESSAGE_CREATE frame before it returns.
      clock.delivered.set(idOf(text)!, performance.now());
      fake.userMessage({ channelId: person.channelId, author: person.user, content: text });
    },
    close: () => fake.close(),
  };
}

async function slackRig(clock: Clock): Promise<Rig> {
  const fake: FakeSlack = await startFakeSlack();
  onPush<ApiCall>(fake.calls, (call) => {
    const id = call.method === 'chat.postMessage' ? idOf(call.params.text) : undefined;
    if (id && !clock.answered.has(id)) clock.answered.set(id, performance.now());
  });
  return {
    name: 'slack',
    config: { slack: { botToken: fake.botToken, appToken: fake.appToken, apiUrl: fake.apiUrl } },
    prepare: (chat) => {
      fake.addUser({ id: `U${chat}`, name: `P${chat}` });
      fake.addConversation({ id: `DU${chat}`, type: 'im', user: `U${chat}` });
    },
    write: (chat, text) => {
      // sendMessage sends the envelope on the socket before its first await.
      clock.delivered.set(idOf(text)!, performance.now());
      void fake.sendMessage({ channel: `DU${chat}`, user: `U${chat}`, text });
    },
    close: () => fake.close(),
  };
}

const RIGS = { telegram: telegramRig, discord: discordRig, slack: slackRig } as const;

/** The fake model: answers `reply mN` after the current latency; keeps the last request for the baseline. */
class Model {
  latencyMs = 0;
  lastRequest: FakeLlmRequest | undefined;
  llm!: FakeLlm;

  async start(): Promise<void> {
    this.llm = await startFakeLlm({
      record: false,
      responder: (request) => {
        const user = [...request.messages].reverse().find((message) => message.role === 'user');
        if (idOf(user?.content)) this.lastRequest = request;
        return textReply(`reply ${idOf(user?.content) ?? 'm0'}`, { latencyMs: this.latencyMs });
      },
    });
  }

  /** The model's latency as a plain SDK client sees it: `count` streamed replays of pincer's last request. */
  async baseline(count: number): Promise<number[]> {
    const client = new OpenAI({ baseURL: this.llm.url, apiKey: 'bench', maxRetries: 0 });
    const body = { ...this.lastRequest!, stream: true } as unknown as ChatCompletionCreateParamsStreaming;
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      const stream = await client.chat.completions.create(body);
      for await (const chunk of stream) void chunk;
      samples.push(performance.now() - start);
    }
    return samples;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`reply-latency: timed out waiting for ${what}`);
    await sleep(2);
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Settings of one run. */
export interface ReplyLatencyOptions {
  platforms?: (keyof typeof RIGS)[];
  latenciesMs?: number[];
  /** Distinct chats, one message each. */
  distinctChats?: number;
  /** Chats that each get `repeats` messages in a row. */
  repeatChats?: number;
  repeats?: number;
}

/** Runs the benchmark and returns one row per platform, model latency and workload. */
export async function runReplyLatencyBench(options: ReplyLatencyOptions = {}) {
  const { platforms = ['telegram', 'discord', 'slack'], latenciesMs = [0, 200], distinctChats = 60, repeatChats = 4, repeats = 8 } = options;
  const model = new Model();
  await model.start();
  const rows: Record<string, unknown>[] = [];
  try {
    for (const platform of platforms) {
      for (const latency of latenciesMs) {
        model.latencyMs = latency;
        rows.push(...(await runPlatform(platform, model, { distinctChats, repeatChats, repeats })));
      }
    }
  } finally {
    await model.llm.close();
  }
  return rows;
}

async function runPlatform(platform: keyof typeof RIGS, model: Model, sizes: { distinctChats: number; repeatChats: number; repeats: number }) {
  const clock: Clock = { delivered: new Map(), answered: new Map() };
  const rig = await RIGS[platform](clock);
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-latency-'));
  let app: App | undefined;
  let next = 0;
  const send = (chat: number) => {
    const id = `m${++next}`;
    rig.write(chat, `question ${id}`);
    return id;
  };
  const answered = (ids: string[]) => () => ids.every((id) => clock.answered.has(id));
  try {
    const config = parseConfig({
      dataDir: dir,
      logLevel: 'silent',
      terminal: { enabled: 'off' },
      llm: { baseUrl: model.llm.url, apiKey: 'bench', model: 'fake-model' },
      ...rig.config,
    });
    app = await createApp({ config });
    await app.start();
    const chats = 1 + sizes.distinctChats + sizes.repeatChats;
    for (let chat = 0; chat < chats; chat++) rig.prepare(chat);
    // Warm-up in chat 0: connections open, code paths compiled.
    for (let i = 0; i < 5; i++) {
      const id = send(0);
      await until(answered([id]), 'the warm-up answer');
      await sleep(1_100);
    }
    const distinct: string[] = [];
    for (let chat = 1; chat <= sizes.distinctChats; chat++) {
      distinct.push(send(chat));
      await sleep(50);
    }
    await until(answered(distinct), 'the distinct-chat answers');
    const repeated: string[] = [];
    await Promise.all(
      Array.from({ length: sizes.repeatChats }, async (_, index) => {
        const chat = 1 + sizes.distinctChats + index;
        for (let i = 0; i < sizes.repeats; i++) {
          const id = send(chat);
          repeated.push(id);
          await until(answered([id]), 'a same-chat answer');
          await sleep(1_100);
        }
      }),
    );
    const baseline = await model.baseline(40);
    const modelP50 = percentile([...baseline].sort((a, b) => a - b), 0.5);
    const row = (workload: string, ids: string[]) => {
      const samples = ids.map((id) => clock.answered.get(id)! - clock.delivered.get(id)!).sort((a, b) => a - b);
      const p50 = percentile(samples, 0.5);
      return { platform: rig.name, L: model.latencyMs, workload, n: samples.length, modelP50, p50, p99: percentile(samples, 0.99), 'p50 - model': p50 - modelP50 };
    };
    return [row('distinct chats', distinct), row('same chat', repeated)];
  } finally {
    await app?.stop('bench over');
    await rig.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
