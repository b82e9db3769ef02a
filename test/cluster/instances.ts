/**
 * Instances of the real app on one database of the test Redis, over one test
 * platform and one fake model, for the cluster suites.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { Tool } from '../../src/tools/types.js';
import type { FakeLlm } from '../fakes/llm/server.js';
import type { TestChannel, TestPlatform } from '../support/test-channel.js';

/** One running instance and the adapter it reads the platform through. */
export interface Instance {
  app: App;
  channel: TestChannel;
  /** Stops the app and removes its data folder. */
  stop(): Promise<void>;
}

/** What an instance is made of besides its id. */
export interface InstanceOptions {
  storeUrl: string;
  platform: TestPlatform;
  llm: FakeLlm;
  tools?: Tool[];
  /** How long a thread lease lasts unless renewed (default 2 s). */
  leaseTtlMs?: number;
}

/** Starts instance `id` on the store of `options`; its adapter is the platform's latest. */
export async function startInstance(id: string, options: InstanceOptions): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), `pincer-cluster-${id}-`));
  const config = parseConfig({
    dataDir: dir,
    storeUrl: options.storeUrl,
    owners: ['test:owner'],
    cluster: { instanceId: id, leaseTtlMs: options.leaseTtlMs ?? 2_000 },
    llm: { baseUrl: options.llm.url, model: 'fake-model', maxRetries: 0, stream: false },
    agent: { shutdownTimeoutMs: 3_000 },
  });
  let channel: TestChannel | undefined;
  const app = await createApp({ config, tools: options.tools ?? [], channels: [{ name: 'test', create: (deps) => (channel = options.platform.createChannel(deps)) }] });
  await app.start();
  return {
    app,
    channel: channel!,
    async stop() {
      await app.stop('test over');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
