/**
 * Readiness follows the channels: a Telegram long poll that hangs with its
 * connection open turns /readyz 503 naming telegram, the watchdog replaces the
 * poll, and once polls complete again the bot is ready and answers. Discord
 * and Slack report their gateway and socket as their libraries see them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { DiscordChannel } from '../../src/channels/discord/adapter.js';
import { SlackChannel } from '../../src/channels/slack/adapter.js';
import { TelegramChannel } from '../../src/channels/telegram/adapter.js';
import type { TelegramChannelOptions } from '../../src/channels/telegram/options.js';
import type { ChannelDeps } from '../../src/channels/types.js';
import { PollWatchdog } from '../../src/channels/telegram/watchdog.js';
import { parseConfig } from '../../src/config/load.js';
import { DiscordConfigSchema, SlackConfigSchema } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { ALICE, capturingLogger, dmOf, EventReader, testConfig, testDeps } from '../channels/telegram/helpers.js';
import { startFakeDiscord } from '../fakes/discord/index.js';
import { startFakeLlm, textReply } from '../fakes/llm/server.js';
import { startFakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../fakes/telegram/index.js';
import { freePort } from '../support/ports.js';

/** One-second polls, and a poll counts as stalled 300 ms after its timeout. */
const STALL_OPTIONS: TelegramChannelOptions = {
  pollingTimeoutSeconds: 1,
  stallGraceMs: 300,
  pollingRetryDelayMs: 50,
  networkRetryDelayMs: 20,
  throttle: false,
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

/** Polls /readyz until its status is `status`; returns the last answer. */
async function readyzBecomes(port: number, status: number, timeoutMs: number): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await get(port, '/readyz');
    if (answer.status === status) return answer;
    if (Date.now() > deadline) throw new Error(`/readyz stayed ${answer.status} (${answer.body.trim()}) for ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The app on the Telegram fake, with the operations endpoint on `port`. */
async function startTelegramBot(fake: FakeTelegram, port: number): Promise<App> {
  const llm = await startFakeLlm({ responder: () => textReply('hi') });
  const dir = mkdtempSync(join(tmpdir(), 'pincer-ready-'));
  cleanups.push(async () => {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const config = parseConfig({
    dataDir: dir,
    owners: [`telegram:${ALICE.id}`],
    llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false },
    agent: { shutdownTimeoutMs: 3_000 },
    http: { port },
  });
  const channels = [{ name: 'telegram', create: (deps: ChannelDeps) => new TelegramChannel(testConfig(fake), deps, { ...STALL_OPTIONS, owners: config.owners }) }];
  const app = await createApp({ config, channels });
  cleanups.push(() => app.stop('test over'));
  await app.start();
  return app;
}

function getUpdatesCalls(fake: FakeTelegram): number {
  return fake.calls.filter((call) => call.method === 'getUpdates').length;
}

describe('/readyz and a Telegram long poll that stops receiving', () => {
  it('turns 503 naming telegram while polls hang, then 200 once they complete, and the bot answers', async () => {
    const fake = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const port = await freePort();
    await startTelegramBot(fake, port);
    expect(await readyzBecomes(port, 200, 3_000)).toMatchObject({ body: 'ready\n' });

    fake.stall();
    const stalled = await readyzBecomes(port, 503, 5_000);
    expect(stalled.body).toMatch(/telegram: no long poll has completed for \d+ s; reconnecting/);

    fake.resume();
    expect(await readyzBecomes(port, 200, 5_000)).toMatchObject({ body: 'ready\n' });
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'still there?' });
    await waitFor(() => fake.chatMessages(ALICE.id).some((message) => message.plainText === 'hi'), 5_000, 'the answer after resuming');
  }, 20_000);
});

describe('the Telegram watchdog', () => {
  it('replaces a hanging poll with a new getUpdates, warns once per stall, and is ready again when a poll completes', async () => {
    const fake = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const lines: string[] = [];
    const channel = new TelegramChannel(testConfig(fake), testDeps({ log: capturingLogger(lines) }), { ...STALL_OPTIONS, owners: [`telegram:${ALICE.id}`] });
    cleanups.push(() => channel.stop());
    await channel.start();
    const events = new EventReader(channel.events());
    await waitFor(() => getUpdatesCalls(fake) > 0, 3_000, 'the first poll');
    expect(channel.health()).toEqual({ ready: true });

    fake.stall();
    const hanging = getUpdatesCalls(fake);
    // Two reconnects: the watchdog keeps replacing the poll while nothing completes.
    await waitFor(() => getUpdatesCalls(fake) >= hanging + 2, 6_000, 'two new polls after the stall');
    expect(channel.health()).toMatchObject({ ready: false, reason: expect.stringMatching(/^telegram: no long poll has completed for \d+ s; reconnecting$/) });
    const warnings = lines.filter((line) => line.includes('no long poll has completed') && line.includes('"level":40'));
    expect(warnings).toHaveLength(1);

    fake.resume();
    await waitFor(() => channel.health().ready, 5_000, 'ready again');
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'after the stall' });
    await events.next((event) => event.type === 'message' && event.text === 'after the stall');
  }, 15_000);

  it('reconnects once per window of silence, measured from the last completion or reconnect', () => {
    let now = 10_000;
    const poll = { lastCompletedAt: 10_000, reconnects: 0, reconnect: () => void poll.reconnects++ };
    const watchdog = new PollWatchdog(poll, { stallAfterMs: 1_000, log: silentLogger, now: () => now });
    now = 11_000;
    watchdog.check();
    expect([watchdog.health().ready, poll.reconnects]).toEqual([true, 0]);
    now = 11_001;
    watchdog.check();
    expect([watchdog.health().ready, poll.reconnects]).toEqual([false, 1]);
    now = 11_500;
    watchdog.check();
    expect(poll.reconnects).toBe(1);
    now = 12_002;
    watchdog.check();
    expect(poll.reconnects).toBe(2);
    poll.lastCompletedAt = 12_100;
    now = 12_200;
    watchdog.check();
    expect([watchdog.health().ready, poll.reconnects]).toEqual([true, 2]);
  });
});

describe('Discord and Slack health', () => {
  it('Discord: ready while the gateway shard is ready, again after a resume, not once stopped', async () => {
    const fake = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const channel = new DiscordChannel(DiscordConfigSchema.parse({ token: fake.token, apiUrl: fake.apiUrl }), testDeps());
    cleanups.push(() => channel.stop());
    expect(channel.health()).toMatchObject({ ready: false, reason: 'discord: not connected to the gateway' });
    await channel.start();
    expect(channel.health()).toEqual({ ready: true });
    fake.dropGateway(4000);
    await waitFor(() => fake.resumes > 0 && channel.health().ready, 10_000, 'the resumed gateway');
    await channel.stop();
    expect(channel.health().ready).toBe(false);
  }, 20_000);

  it('Slack: ready while the Socket Mode socket is connected, again after Slack asks for a reconnect', async () => {
    const fake = await startFakeSlack();
    cleanups.push(() => fake.close());
    const config = SlackConfigSchema.parse({ botToken: fake.botToken, appToken: fake.appToken, apiUrl: fake.apiUrl });
    const channel = new SlackChannel(config, testDeps());
    cleanups.push(() => channel.stop());
    expect(channel.health().ready).toBe(false);
    await channel.start();
    expect(channel.health()).toEqual({ ready: true });
    fake.requestReconnect();
    await waitFor(() => !channel.health().ready, 5_000, 'the socket closing');
    await waitFor(() => channel.health().ready, 10_000, 'the socket connected again');
    await channel.stop();
    expect(channel.health().ready).toBe(false);
  }, 20_000);
});
