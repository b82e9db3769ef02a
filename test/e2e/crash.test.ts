/**
 * kill -9 at awkward moments, against the built product on the Telegram fake:
 * mid-turn (the model answering), mid-tool (an approved fetch running), and
 * with messages waiting for a turn slot (and the same after a graceful
 * SIGTERM); and a background job killed during a step and during a call its
 * owner approved, on SQLite and on Redis with BullMQ. After the restart nothing
 * is lost and no side effect happens twice.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from './build.js';
import { flushDb, redisDbUrl } from './cluster-harness.js';
import { textOf } from './model.js';
import { cleanUp, startPincer, tempDir, waitUntil, type PincerProcess } from './pincer.js';
import { DM, OWNER, buttonsOf, dmMessages, press, say } from './telegram.js';

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
let server: Server | undefined;

beforeAll(() => ensureBuilt(), 130_000);

afterEach(async () => {
  await cleanUp();
  await llm?.close();
  await telegram?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  llm = telegram = server = undefined;
});

function env(model: FakeLlm, fake: FakeTelegram, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENAI_BASE_URL: model.url,
    PINCER_MODEL: 'fake-model',
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_API_ROOT: fake.apiRoot,
    PINCER_OWNERS: `telegram:${OWNER.id}`,
    ...extra,
  };
}

async function running(pincer: PincerProcess): Promise<void> {
  await pincer.waitForOutput('pincer is running', 20_000);
}

async function kill9(pincer: PincerProcess): Promise<void> {
  process.kill(pincer.pid, 'SIGKILL');
  await pincer.waitForExit(5_000);
}

/** The last user text of a request. */
function lastUserText(request: FakeLlmRequest): string {
  const user = [...request.messages].reverse().find((message) => message.role === 'user');
  return user ? textOf(user) : '';
}

/** Texts of the bot's messages in a chat. */
function texts(fake: FakeTelegram, chatId: number): string[] {
  return fake.chatMessages(chatId).map((message) => message.plainText);
}

async function waitForText(fake: FakeTelegram, chatId: number, pattern: RegExp, pincer: PincerProcess, timeoutMs = 20_000): Promise<void> {
  await waitUntil(
    () => texts(fake, chatId).some((text) => pattern.test(text)),
    timeoutMs,
    () => `${String(pattern)} in chat ${chatId}; it shows ${JSON.stringify(texts(fake, chatId))}\n${pincer.output()}`,
  );
}

describe('a crash or a shutdown mid-work', () => {
  it('mid-turn: after the restart the person is told in one line and gets the answer, once', async () => {
    let hang = true;
    const model = (llm = await startFakeLlm({
      responder: (request): FakeLlmEntry => (hang ? { type: 'hang' } : textReply(`Answer to: ${lastUserText(request)}`)),
    }));
    const fake = (telegram = await startFakeTelegram());
    const dataDir = tempDir();
    const first = startPincer(env(model, fake), { dataDir });
    await running(first);
    say(fake, 'what is the capital of Peru?');
    await waitUntil(() => model.served >= 1, 15_000, () => `the model request\n${first.output()}`);
    await kill9(first);

    hang = false;
    const second = startPincer(env(model, fake), { dataDir });
    await running(second);
    await waitForText(fake, DM.id, /Answer to: what is the capital of Peru\?/, second);
    const shown = texts(fake, DM.id);
    expect(shown.filter((text) => /picking up where I left off/.test(text))).toHaveLength(1);
    expect(shown.filter((text) => text.includes('Answer to:'))).toHaveLength(1);
    // The message is in the conversation once.
    const last = model.requests.at(-1)!;
    expect(last.messages.filter((m) => m.role === 'user' && textOf(m).includes('capital of Peru'))).toHaveLength(1);
  }, 90_000);

  it('mid-tool: an approved fetch that was running is reported to the model as interrupted, not run again', async () => {
    let hits = 0;
    server = createServer(() => {
      hits += 1; // never answers: the fetch is running when the process dies
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
    const model = (llm = await startFakeLlm({
      responder: (request): FakeLlmEntry => {
        const last = request.messages.at(-1)!;
        if (last.role === 'tool') return textReply(`Tool said: ${textOf(last)}`);
        if (lastUserText(request) === 'marker') return textReply('marker answered');
        return toolCallReply([{ name: 'http_fetch', arguments: { url } }]);
      },
    }));
    const fake = (telegram = await startFakeTelegram());
    const dataDir = tempDir();
    const configFile = join(tempDir(), 'pincer.yaml');
    writeFileSync(configFile, 'tools:\n  http:\n    allowHosts: ["127.0.0.1"]\n    timeoutMs: 60000\n');
    const first = startPincer(env(model, fake, { PINCER_CONFIG: configFile }), { dataDir });
    await running(first);
    say(fake, 'fetch the slow page');
    const prompt = await waitUntil(
      () => dmMessages(fake).find((message) => buttonsOf(message).length > 0),
      15_000,
      () => `an approval prompt; the DM shows ${JSON.stringify(texts(fake, DM.id))}\n${first.output()}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    press(fake, prompt, 'Approve');
    await waitUntil(() => hits === 1, 15_000, () => `the fetch to start\n${first.output()}`);
    await kill9(first);

    const second = startPincer(env(model, fake, { PINCER_CONFIG: configFile }), { dataDir });
    await running(second);
    await waitForText(fake, DM.id, /Tool said: Interrupted/, second);
    // A re-run would come in the same thread before the answer to a later message.
    say(fake, 'marker');
    await waitForText(fake, DM.id, /marker answered/, second);
    expect(texts(fake, DM.id).filter((text) => /picking up where I left off/.test(text))).toHaveLength(1);
    expect(texts(fake, DM.id).filter((text) => text.startsWith('Tool said:'))).toHaveLength(1);
    expect(hits).toBe(1);
  }, 90_000);

  it.each(['SIGKILL', 'SIGTERM'] as const)('%s with messages waiting for a turn slot: every one is answered after the restart', async (signal) => {
    let hang = true;
    const model = (llm = await startFakeLlm({
      responder: (request): FakeLlmEntry => (hang ? { type: 'hang' } : textReply(`Answer to: ${lastUserText(request)}`)),
    }));
    const fake = (telegram = await startFakeTelegram());
    const dataDir = tempDir();
    const configFile = join(tempDir(), 'pincer.yaml');
    writeFileSync(configFile, 'agent:\n  maxConcurrentTurns: 1\n');
    const people: User[] = [2_000_101, 2_000_102, 2_000_103].map((id) => ({ id, is_bot: false, first_name: `P${id}` }));
    const chats = people.map((person) => ({ id: person.id, type: 'private', first_name: person.first_name }) as Chat);
    const first = startPincer(env(model, fake, { PINCER_CONFIG: configFile }), { dataDir });
    await running(first);
    const updates = people.map((person, i) => fake.sendUserMessage({ chat: chats[i]!, from: person, text: `question ${i}` }).updateId);
    // One turn holds the only slot; the other two wait. The bot confirms an update once it has
    // stored its message and routed it to its thread: all three are in, and only one was let through.
    await waitUntil(() => model.served >= 1 && updates.every((id) => fake.confirmed(id)), 15_000, () => `the first model request, all three messages taken\n${first.output()}`);
    expect(model.served).toBe(1);
    process.kill(first.pid, signal);
    await first.waitForExit(15_000);

    hang = false;
    const second = startPincer(env(model, fake, { PINCER_CONFIG: configFile }), { dataDir });
    await running(second);
    for (const [i, chat] of chats.entries()) await waitForText(fake, chat.id, new RegExp(`Answer to: question ${i}`), second);
    for (const chat of chats) expect(texts(fake, chat.id).filter((text) => text.startsWith('Answer to:'))).toHaveLength(1);
    // The turn that held the slot was interrupted; its person is told once that it goes on.
    expect(texts(fake, chats[0]!.id).filter((text) => /picking up where I left off/.test(text))).toHaveLength(1);
  }, 90_000);
});

/** The job tests run on SQLite, and on the test Redis (its database 4, emptied before each) with jobs on BullMQ. */
const REDIS = process.env.PINCER_TEST_REDIS_URL;
const STORES: Array<{ store: string; skip: string; env: Record<string, string>; config: string }> = [
  { store: 'SQLite', skip: '', env: {}, config: '' },
  {
    store: 'Redis with BullMQ',
    skip: REDIS ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)',
    env: REDIS ? { PINCER_STORE_URL: redisDbUrl(REDIS, 4) } : {},
    // A short lease: the restarted process polls Telegram once the dead one's election lease lapses.
    config: 'cluster:\n  leaseTtlMs: 2000\n',
  },
];

/** A local page server: `/fast` answers at once; every other path never answers (a call still running when the process dies). */
async function pages(): Promise<{ base: string; hits: { fast: number; slow: number } }> {
  const hits = { fast: 0, slow: 0 };
  server = createServer((request, response) => {
    if (request.url === '/fast') {
      hits.fast += 1;
      response.end('fast page');
    } else {
      hits.slow += 1;
    }
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/**
 * A model that creates job `title` with `tools` when asked in the chat; the
 * job then makes the calls of `calls` one step at a time, and reports which
 * results it got once it has all of them.
 */
function jobModel(title: string, tools: string[], calls: string[]): (request: FakeLlmRequest) => FakeLlmEntry {
  return (request) => {
    const system = textOf(request.messages[0]!);
    const results = request.messages.filter((message) => message.role === 'tool').map(textOf);
    if (!/background job/.test(system)) {
      return results.length ? textReply('The job is started.') : toolCallReply([{ name: 'create_job', arguments: { title, goal: 'fetch the pages', tools } }]);
    }
    if (results.length < calls.length) return toolCallReply([{ name: 'http_fetch', arguments: { url: calls[results.length]! } }]);
    return textReply(`DONE: ${results.map((result) => (/interrupted/.test(result) ? 'interrupted' : /fast page/.test(result) ? 'fetched' : 'other')).join(', ')}`);
  };
}

/** Waits for a prompt with buttons in the DM that reads `pattern`, and presses Approve. */
async function approveIn(fake: FakeTelegram, pattern: RegExp, pincer: PincerProcess): Promise<void> {
  const prompt = await waitUntil(
    () => dmMessages(fake).find((message) => buttonsOf(message).length > 0 && pattern.test(message.plainText)),
    15_000,
    () => `a prompt reading ${String(pattern)}; the DM shows ${JSON.stringify(texts(fake, DM.id))}\n${pincer.output()}`,
  );
  press(fake, prompt, 'Approve');
}

describe.each(STORES)('a job killed mid-work ($store)', ({ store, skip, env: storeEnv, config }) => {
  beforeEach(async () => {
    if (REDIS && store !== 'SQLite') await flushDb(redisDbUrl(REDIS, 4));
  });

  function start(model: FakeLlm, fake: FakeTelegram, dataDir: string, configFile: string): PincerProcess {
    return startPincer(env(model, fake, { PINCER_CONFIG: configFile, ...storeEnv }), { dataDir });
  }

  function configFile(): string {
    const file = join(tempDir(), 'pincer.yaml');
    writeFileSync(file, `tools:\n  http:\n    allowHosts: ["127.0.0.1"]\n    timeoutMs: 60000\n${config}`);
    return file;
  }

  it.skipIf(Boolean(skip))(`during a step: the job resumes; a call that finished is not run again, the running one is reported as interrupted${skip}`, async () => {
    const { base, hits } = await pages();
    const model = (llm = await startFakeLlm({ responder: jobModel('Two pages', ['http_fetch'], [`${base}/fast`, `${base}/slow`]) }));
    const fake = (telegram = await startFakeTelegram());
    const dataDir = tempDir();
    const file = configFile();
    const first = start(model, fake, dataDir, file);
    await running(first);
    say(fake, 'fetch both pages in the background');
    await approveIn(fake, /create_job|Two pages/, first);
    await waitUntil(() => hits.slow === 1, 15_000, () => `the second fetch to start\n${first.output()}`);
    await kill9(first);

    const second = start(model, fake, dataDir, file);
    await running(second);
    await waitForText(fake, DM.id, /Job \S+ "Two pages" is done\.\s+fetched, interrupted/, second, 40_000);
    // The job's model answered only after the results: a call run again (its page never answers) would have held it.
    expect(hits).toEqual({ fast: 1, slow: 1 });
    expect(texts(fake, DM.id).filter((text) => /is done/.test(text))).toHaveLength(1);
  }, 90_000);

  it.skipIf(Boolean(skip))(`during a call its owner approved: the job resumes, the call reported as interrupted and not run again${skip}`, async () => {
    const { base, hits } = await pages();
    // The job may fetch nothing on its own: its fetch asks the owner.
    const model = (llm = await startFakeLlm({ responder: jobModel('Slow page', [], [`${base}/slow`]) }));
    const fake = (telegram = await startFakeTelegram());
    const dataDir = tempDir();
    const file = configFile();
    const first = start(model, fake, dataDir, file);
    await running(first);
    say(fake, 'fetch the slow page in the background');
    await approveIn(fake, /create_job|Slow page/, first);
    await approveIn(fake, /Job \S+ "Slow page" wants to run this/, first);
    await waitUntil(() => hits.slow === 1, 15_000, () => `the approved fetch to start\n${first.output()}`);
    await kill9(first);

    const second = start(model, fake, dataDir, file);
    await running(second);
    await waitForText(fake, DM.id, /Job \S+ "Slow page" is done\.\s+interrupted/, second, 40_000);
    expect(hits.slow).toBe(1);
    expect(texts(fake, DM.id).filter((text) => /is done/.test(text))).toHaveLength(1);
  }, 90_000);
});
