import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../../src/app.js';
import { MessagePacer, messagePacing, type PacingClock } from '../../../src/channels/telegram/pacing.js';
import { parseConfig } from '../../../src/config/load.js';
import type { Tool } from '../../../src/tools/types.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmEntry } from '../../fakes/llm/server.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../../fakes/telegram/index.js';
import { scenarioTools, ToolLog } from '../../scenarios/tools.js';
import { ALICE, startChannel } from './helpers.js';

/** A clock the test moves by hand: sleepers wake only when it passes their time. */
class ManualClock implements PacingClock {
  time = 0;
  private sleepers: { at: number; wake: () => void }[] = [];

  now = (): number => this.time;

  sleep = (ms: number): Promise<void> => new Promise((wake) => this.sleepers.push({ at: this.time + ms, wake }));

  /** Moves to `time`, waking due sleepers, and lets the woken work run. */
  async advanceTo(time: number): Promise<void> {
    this.time = time;
    for (const sleeper of this.sleepers.filter((s) => s.at <= time)) sleeper.wake();
    this.sleepers = this.sleepers.filter((s) => s.at > time);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Runs calls through a pacer on a manual clock and records when each one started. */
function pacedCalls(clock: ManualClock) {
  const pacer = new MessagePacer(undefined, clock);
  const started: Record<string, number> = {};
  const run = (name: string, chatId: string) => void pacer.run(chatId, async () => void (started[name] = clock.time));
  return { pacer, started, run };
}

describe('MessagePacer: Telegram message limits', () => {
  it('spaces messages in one chat a second apart, in order', async () => {
    const clock = new ManualClock();
    const { started, run } = pacedCalls(clock);
    run('first', '42');
    run('second', '42');
    run('third', '42');
    await clock.advanceTo(0);
    expect(started).toEqual({ first: 0 });
    await clock.advanceTo(999);
    expect(started).toEqual({ first: 0 });
    await clock.advanceTo(1_000);
    await clock.advanceTo(2_000);
    expect(started).toEqual({ first: 0, second: 1_000, third: 2_000 });
  });

  it('does not make different chats wait for each other', async () => {
    const clock = new ManualClock();
    const { started, run } = pacedCalls(clock);
    for (let chat = 1; chat <= 5; chat++) run(`chat ${chat}`, String(chat));
    await clock.advanceTo(0);
    expect(Object.values(started)).toEqual([0, 0, 0, 0, 0]);
  });

  it('allows 20 messages a minute in a group', async () => {
    const clock = new ManualClock();
    const { started, run } = pacedCalls(clock);
    for (let i = 1; i <= 21; i++) run(`m${i}`, '-1001234');
    for (let t = 0; t <= 59_000; t += 1_000) await clock.advanceTo(t);
    expect(started.m20).toBe(19_000);
    expect(started.m21).toBeUndefined();
    await clock.advanceTo(60_000);
    expect(started.m21).toBe(60_000);
  });

  it('allows 30 messages a second over all chats', async () => {
    const clock = new ManualClock();
    const { started, run } = pacedCalls(clock);
    for (let chat = 1; chat <= 31; chat++) run(`chat ${chat}`, String(chat));
    await clock.advanceTo(0);
    expect(Object.keys(started)).toHaveLength(30);
    await clock.advanceTo(1_000);
    expect(started['chat 31']).toBe(1_000);
  });

  it('forgets chats that have been quiet for longer than every window', async () => {
    const clock = new ManualClock();
    const { pacer, run } = pacedCalls(clock);
    for (let chat = 1; chat <= 10; chat++) run('m', String(chat));
    await clock.advanceTo(0);
    expect(pacer.trackedChats).toBe(10);
    await clock.advanceTo(61_000);
    run('later', '99');
    await clock.advanceTo(61_000);
    expect(pacer.trackedChats).toBe(1);
  });

  it('lets chat actions through at once, ahead of a message that waits for its slot', async () => {
    const clock = new ManualClock();
    const transformer = messagePacing(new MessagePacer(undefined, clock));
    const calls: string[] = [];
    const prev = async (method: string) => {
      calls.push(`${method}@${clock.time}`);
      return { ok: true as const, result: true };
    };
    const call = (method: string) => void transformer(prev as never, method as never, { chat_id: 42 } as never);
    call('sendMessage');
    call('sendMessage');
    call('sendChatAction');
    await clock.advanceTo(0);
    expect([...calls].sort()).toEqual(['sendChatAction@0', 'sendMessage@0']);
    await clock.advanceTo(1_000);
    expect(calls.at(-1)).toBe('sendMessage@1000');
  });
});

/** Holds the fake's answers to `method` until released: a call that waits behind it cannot arrive meanwhile. */
function holdMethod(fake: FakeTelegram, method: string): { release(): void; held(): number } {
  let open = false;
  const waiting: (() => void)[] = [];
  const handle = fake.handle.bind(fake);
  fake.handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!open && req.url?.endsWith(`/${method}`)) await new Promise<void>((resolve) => waiting.push(resolve));
    return handle(req, res);
  };
  return {
    release() {
      open = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
    held: () => waiting.length,
  };
}

describe('Telegram with per-chat pacing on (the production default)', () => {
  let fake: FakeTelegram | undefined;
  let llm: FakeLlm | undefined;
  let app: App | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await app?.stop('test over');
    await fake?.close();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    app = fake = llm = dir = undefined;
  });

  it('sends a message while a typing indicator of the same chat is still in flight', async () => {
    fake = await startFakeTelegram();
    const typing = holdMethod(fake, 'sendChatAction');
    const harness = await startChannel(fake, { options: { throttle: true } });
    try {
      const chat = { channel: 'telegram', chatId: String(ALICE.id) };
      const shown = harness.channel.typing(chat);
      await waitFor(() => typing.held() === 1);
      await harness.channel.send(chat, 'the answer');
      expect(fake.chatMessages(ALICE.id).map((m) => m.plainText)).toEqual(['the answer']);
      expect(typing.held()).toBe(1);
      typing.release();
      await shown;
    } finally {
      await harness.channel.stop();
    }
  });

  /** The whole app with the Telegram channel as production configures it (pacing and streaming on). */
  async function startApp(script: FakeLlmEntry[], tools: Tool[] = []): Promise<void> {
    llm = await startFakeLlm({ script });
    dir = mkdtempSync(join(tmpdir(), 'pincer-pacing-'));
    const config = parseConfig({
      dataDir: dir,
      logLevel: 'silent',
      terminal: { enabled: 'off' },
      llm: { baseUrl: llm.url, apiKey: 'test', model: 'fake-model', maxRetries: 0 },
      telegram: { token: fake!.token, apiRoot: fake!.apiRoot },
    });
    app = await createApp({ config, tools });
    await app.start();
  }

  const aliceWrites = (text: string) => fake!.sendUserMessage({ chat: { id: ALICE.id, type: 'private', first_name: ALICE.first_name }, from: ALICE, text });

  it('answers a zero-latency model without waiting for the typing indicator', async () => {
    fake = await startFakeTelegram();
    const typing = holdMethod(fake, 'sendChatAction');
    await startApp([textReply('Hello, Alice.')]);
    aliceWrites('hi');
    await waitFor(() => fake!.chatMessages(ALICE.id).some((m) => m.plainText === 'Hello, Alice.'), 10_000);
    // The typing call of this turn has not even been answered: the answer did not queue behind it.
    expect(typing.held()).toBeGreaterThanOrEqual(1);
    typing.release();
  });

  it('sends the answer before it rewrites the status line of a slow tool', async () => {
    fake = await startFakeTelegram();
    // Longer than the presenter's delay before a status line appears.
    await startApp([toolCallReply([{ name: 'slow', arguments: { ms: 1_700 } }]), textReply('All done.')], scenarioTools(new ToolLog()));
    aliceWrites('take your time');
    await waitFor(() => fake!.chatMessages(ALICE.id).some((m) => m.plainText.startsWith('⚙️ Used')), 15_000);
    const order = fake.calls
      .filter((call) => ['sendMessage', 'editMessageText'].includes(call.method))
      .map((call) => String(call.payload.text))
      .map((text) => (text.includes('Running') ? 'status' : text.includes('Used') ? 'status rewritten' : text.includes('All done') ? 'answer' : text));
    expect(order).toEqual(['status', 'answer', 'status rewritten']);
  });

  it('frees the turn slot while an answer waits for its chat\'s pacing: another chat is answered meanwhile', async () => {
    fake = await startFakeTelegram();
    llm = await startFakeLlm({
      responder: (request) => {
        const last = String(request.messages.at(-1)?.content ?? '');
        return textReply(last === 'hi' ? 'Hello, Bob.' : `Alice ${last}`);
      },
    });
    dir = mkdtempSync(join(tmpdir(), 'pincer-pacing-'));
    const config = parseConfig({
      dataDir: dir,
      logLevel: 'silent',
      terminal: { enabled: 'off' },
      agent: { maxConcurrentTurns: 1 },
      llm: { baseUrl: llm.url, apiKey: 'test', model: 'fake-model', maxRetries: 0 },
      telegram: { token: fake.token, apiRoot: fake.apiRoot },
    });
    app = await createApp({ config });
    await app.start();
    const bob = { id: 4_242, is_bot: false, first_name: 'Bob' };
    aliceWrites('one');
    await waitFor(() => fake!.chatMessages(ALICE.id).some((m) => m.plainText === 'Alice one'), 10_000);
    // Alice's second answer must wait about a second for her chat's pacing.
    aliceWrites('two');
    await waitFor(() => llm!.requests.some((r) => r.messages.at(-1)?.content === 'two'), 10_000);
    fake.sendUserMessage({ chat: { id: bob.id, type: 'private', first_name: bob.first_name }, from: bob, text: 'hi' });
    await waitFor(() => fake!.chatMessages(ALICE.id).some((m) => m.plainText === 'Alice two'), 10_000);
    await waitFor(() => fake!.chatMessages(bob.id).length > 0, 10_000);
    const sent = fake.calls.filter((call) => call.method === 'sendMessage').map((call) => String(call.payload.text));
    // With the only slot held during pacing, Bob would be answered after Alice's second answer.
    expect(sent.indexOf('Hello, Bob.')).toBeLessThan(sent.indexOf('Alice two'));
  });
});
