/**
 * Runs the real application (runtime, tools, store, provider) against a
 * channel driver's fake platform and the fake model, for the scenario suite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import { createLogger, type Logger } from '../../src/log.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config, ConfigInput } from '../../src/config/schema.js';
import { startFakeLlm, type FakeLlm } from '../fakes/llm/server.js';
import { Brain } from './brain.js';
import type { BotMessage, ScenarioAccess, ScenarioChat, ScenarioDriver, ScenarioUser, SeenApproval } from './driver.js';
import { scenarioTools, ToolLog } from './tools.js';

/** A running app wired to a driver and the fake model. */
export interface Harness {
  driver: ScenarioDriver;
  llm: FakeLlm;
  brain: Brain;
  tools: ToolLog;
  app: App;
  config: Config;
  /**
   * The thread key of every event that reached the app (before its own checks), in the order the
   * channel handed them over: one channel's events are routed in order, so an event handed over
   * before a later one that was answered is listed before it.
   */
  inbound: string[];
  /** Stops the app and starts a new one on the same store and fake platform. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Waits until `probe` returns a value (not undefined, null or false), or fails with `what`. */
export async function waitFor<T>(probe: () => T | undefined | null | false, what: string | (() => string), timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for a bot message in `chat` whose text contains `text` (or matches). */
export function waitForMessage(harness: Harness, chat: ScenarioChat, text: string | RegExp, timeoutMs = 10_000): Promise<BotMessage> {
  const matches = (message: BotMessage) => (typeof text === 'string' ? message.text.includes(text) : text.test(message.text));
  return waitFor(
    () => harness.driver.messages(chat).find(matches),
    () => `a message matching ${String(text)} in ${chat.id}; seen: ${JSON.stringify(harness.driver.messages(chat).map((m) => m.text))}`,
    timeoutMs,
  );
}

/** Waits for the `index`-th approval prompt (0-based) in `chat`. */
export function waitForApproval(harness: Harness, chat: ScenarioChat, index = 0, timeoutMs = 10_000): Promise<SeenApproval> {
  return waitFor(() => harness.driver.approvals(chat)[index], `approval prompt #${index + 1} in ${chat.id}`, timeoutMs);
}

/** Waits until the prompt with `messageId` has lost its buttons, and returns it. */
export function waitForResolved(harness: Harness, chat: ScenarioChat, messageId: string, timeoutMs = 10_000): Promise<SeenApproval> {
  return waitFor(
    () => harness.driver.approvals(chat).find((a) => a.messageId === messageId && a.actions.length === 0),
    `approval ${messageId} to be resolved`,
    timeoutMs,
  );
}

/**
 * A view of a driver that hides what earlier scenarios left on the shared fake
 * platform: the users' DMs keep their ids across scenarios.
 */
function scopedDriver(driver: ScenarioDriver): ScenarioDriver {
  const seenMessages = new Set<string>();
  const seenApprovals = new Set<string>();
  const noticeBase = new Map<string, number>();
  for (const user of driver.users) {
    const dm = driver.dm(user);
    for (const message of driver.messages(dm)) seenMessages.add(`${dm.id}/${message.messageId}`);
    for (const approval of driver.approvals(dm)) seenApprovals.add(`${dm.id}/${approval.messageId}`);
    noticeBase.set(user.id, driver.privateNotices(user).length);
  }
  const view = Object.create(driver) as ScenarioDriver;
  return Object.assign(view, {
    messages: (chat: ScenarioChat) => driver.messages(chat).filter((m) => !seenMessages.has(`${chat.id}/${m.messageId}`)),
    approvals: (chat: ScenarioChat) => driver.approvals(chat).filter((a) => !seenApprovals.has(`${chat.id}/${a.messageId}`)),
    privateNotices: (user: ScenarioUser) => driver.privateNotices(user).slice(noticeBase.get(user.id) ?? 0),
  });
}

/** What a scenario sets up besides config. */
export interface HarnessOptions {
  /** Allowlists of the channel (the driver must have them: see `noAllowlists`). */
  access?: ScenarioAccess;
  /** The app's logger (default: none, or `PINCER_TEST_LOG`'s level). */
  log?: Logger;
}

/** Starts the fake model and the app with `driver`'s channel. */
export async function startHarness(platform: ScenarioDriver, overrides: ConfigInput = {}, options: HarnessOptions = {}): Promise<Harness> {
  if (options.access && platform.noAllowlists) throw new Error(`${platform.name} has no allowlists: ${platform.noAllowlists}`);
  const driver = scopedDriver(platform);
  const dataDir = mkdtempSync(join(tmpdir(), `pincer-scenario-${driver.name}-`));
  const brain = new Brain();
  const llm = await startFakeLlm({ responder: brain.respond });
  const tools = new ToolLog();
  const config = parseConfig({
    ...overrides,
    dataDir,
    owners: [`${driver.name}:${driver.users[0]!.id}`],
    llm: { baseUrl: llm.url, apiKey: 'sk-test-key-0000', model: 'fake-model', maxRetries: 2, retryBaseDelayMs: 20, retryMaxDelayMs: 100, timeoutMs: 20_000, ...overrides.llm },
    agent: { maxToolIterations: 4, approvalTimeoutMs: 60_000, shutdownTimeoutMs: 3_000, ...overrides.agent },
  });
  const inbound: string[] = [];
  const build = async () => {
    const app = await createApp({
      config,
      ...(options.log ? { log: options.log } : process.env.PINCER_TEST_LOG ? { log: createLogger({ level: process.env.PINCER_TEST_LOG, pretty: false }) } : {}),
      provider: undefined,
      tools: scenarioTools(tools),
      channels: [{ name: platform.name, create: (deps) => platform.createChannel(deps, { owners: config.owners, ...(options.access ? { access: options.access } : {}) }) }],
    });
    app.services.events.on('message.in', (event) => inbound.push(event.thread));
    await app.start();
    return app;
  };
  const harness: Harness = {
    driver,
    llm,
    brain,
    tools,
    config,
    inbound,
    app: await build(),
    async restart() {
      await harness.app.stop('restart');
      harness.app = await build();
    },
    async close() {
      await harness.app.stop('test over');
      await llm.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
