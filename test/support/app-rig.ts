/**
 * The real app (runtime, store, tools, openai-SDK provider) over the in-memory
 * test platform and the fake Chat Completions server, for tests of the runtime's
 * behaviour. `restart()` stops the app and builds a new one on the same data
 * dir, platform and model, as a process restart would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App, type AppOptions } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigInput } from '../../src/config/schema.js';
import type { ToolSource } from '../../src/tools/source.js';
import type { Tool } from '../../src/tools/types.js';
import { startFakeLlm, textReply, type FakeLlm, type FakeLlmEntry, type FakeLlmRequest, type FakeResponder } from '../fakes/llm/server.js';
import { TestPlatform } from './test-channel.js';

/** A running app with its fakes. */
export interface AppRig {
  app: App;
  llm: FakeLlm;
  platform: TestPlatform;
  dir: string;
  /** Stops the app (graceful) without starting another. */
  stopApp(): Promise<void>;
  /** Builds and starts a new app on the same data dir, platform and model. */
  startApp(): Promise<App>;
  /** Stops everything and removes the data dir. */
  close(): Promise<void>;
}

/** What {@link startAppRig} takes. */
export interface AppRigOptions {
  config?: ConfigInput;
  responder?: FakeResponder;
  tools?: Tool[];
  toolSources?: ToolSource[];
  /** Further options of the app (the console's traces and bundle). */
  app?: Pick<AppOptions, 'consoleTraces' | 'consoleAssetsDir'>;
}

/** The user messages since the model's last answer, in order. */
export function userTextsSinceAnswer(request: FakeLlmRequest): string[] {
  const texts: string[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!;
    if (message.role === 'assistant') break;
    if (message.role === 'user') texts.unshift(String(message.content));
  }
  return texts;
}

/** Echoes every user message since the model's last answer. */
export function echoAll(request: FakeLlmRequest): FakeLlmEntry {
  return textReply(`echo: ${userTextsSinceAnswer(request).join(' + ')}`);
}

/** Starts the fake model, then the app over a fresh {@link TestPlatform} and data dir. */
export async function startAppRig(options: AppRigOptions = {}): Promise<AppRig> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-rig-'));
  const llm = await startFakeLlm({ responder: options.responder ?? echoAll, record: true });
  const platform = new TestPlatform();
  const overrides = options.config ?? {};
  const config = parseConfig({
    ...overrides,
    dataDir: dir,
    owners: ['test:owner'],
    llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false, ...overrides.llm },
    agent: { shutdownTimeoutMs: 3_000, ...overrides.agent },
  });
  const build = async (): Promise<App> => {
    const app = await createApp({ ...options.app, config, tools: options.tools ?? [], toolSources: options.toolSources ?? [], channels: [{ name: 'test', create: (deps) => platform.createChannel(deps) }] });
    await app.start();
    return app;
  };
  let running: App | undefined = await build();
  const rig: AppRig = {
    app: running,
    llm,
    platform,
    dir,
    async stopApp() {
      await running?.stop('test restart');
      running = undefined;
    },
    async startApp() {
      running = await build();
      rig.app = running;
      return running;
    },
    async close() {
      await running?.stop('test over');
      running = undefined;
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return rig;
}

/** A model whose answers wait until the test releases them, to hold turns open. */
export class HeldModel {
  private readonly held: Array<() => void> = [];
  /** Requests answered or waiting, in arrival order. */
  readonly arrived: FakeLlmRequest[] = [];
  /** Requests waiting for release now. */
  inFlight = 0;
  /** The most requests that were waiting at the same time. */
  maxInFlight = 0;

  constructor(private readonly answer: (request: FakeLlmRequest) => FakeLlmEntry = echoAll) {}

  /** The responder to give the fake server. */
  respond: FakeResponder = (request) => {
    this.arrived.push(request);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<FakeLlmEntry>((resolve) => {
      this.held.push(() => {
        this.inFlight -= 1;
        resolve(this.answer(request));
      });
    });
  };

  /** Requests waiting for release. */
  get waiting(): number {
    return this.held.length;
  }

  /** Lets the oldest waiting request be answered; false when none waits. */
  releaseOne(): boolean {
    const next = this.held.shift();
    next?.();
    return Boolean(next);
  }

  /** Lets every waiting request be answered. */
  releaseAll(): void {
    while (this.releaseOne());
  }

  /** Answers every request, present and to come, until `app` has nothing left to do. */
  async answerUntilIdle(app: App): Promise<void> {
    const release = setInterval(() => this.releaseAll(), 20);
    try {
      await app.runtime.idle();
    } finally {
      clearInterval(release);
    }
  }
}
