/**
 * Test harness: a fake Discord, a DiscordChannel connected to it, and a reader
 * of the channel's event stream that waits for the next matching event.
 */
import { DiscordChannel } from '../../../src/channels/discord/adapter.js';
import type { ChannelDeps, InboundEvent } from '../../../src/channels/types.js';
import { DiscordConfigSchema } from '../../../src/config/schema.js';
import type { z } from 'zod';
import { COMMANDS } from '../../../src/app.js';
import { silentLogger } from '../../../src/log.js';
import { startFakeDiscord, type FakeDiscord, type FakeDiscordOptions } from '../../fakes/discord/index.js';

/** Tool names offered for autocompletion in the tests. */
export const TOOL_NAMES = ['http_fetch', 'shell', 'memory_search', 'memory_write', 'current_time'];

/** Reads an event stream in the background and hands out events on request. */
export class EventReader {
  private readonly buffer: InboundEvent[] = [];
  private wake?: () => void;

  constructor(stream: AsyncIterable<InboundEvent>) {
    void (async () => {
      for await (const event of stream) {
        this.buffer.push(event);
        this.wake?.();
      }
    })();
  }

  /** The next event matching `match` (earlier non-matching ones are skipped and kept). */
  async next<T extends InboundEvent = InboundEvent>(match: (event: InboundEvent) => boolean = () => true, timeoutMs = 5_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.buffer.findIndex(match);
      if (index >= 0) return this.buffer.splice(index, 1)[0] as T;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no matching event arrived');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Events received and not yet taken. */
  get pending(): readonly InboundEvent[] {
    return this.buffer;
  }
}

/** Dependencies of the channel under test. */
export function testDeps(overrides: Partial<ChannelDeps> = {}): ChannelDeps {
  const state = new Map<string, unknown>();
  return {
    log: silentLogger,
    commands: [...COMMANDS, { name: 'interrupt', description: 'Same as /stop' }],
    completions: (source) => (source === 'tool' ? TOOL_NAMES : []),
    state: { get: async (key) => state.get(key), set: async (key, value) => void state.set(key, value) },
    ...overrides,
  };
}

/** Keys of the `discord` config section to set. */
export type ConfigOverrides = Partial<z.input<typeof DiscordConfigSchema>>;

/** A started fake, a started channel and its event reader. */
export interface Harness {
  discord: FakeDiscord;
  channel: DiscordChannel;
  events: EventReader;
  close(): Promise<void>;
}

/** Starts a fake Discord (prepared by `prepare`, e.g. adding members) and a channel connected to it. */
export async function startHarness(
  options: {
    /** Config keys, or a function of the prepared fake (for ids known only then). */
    config?: ConfigOverrides | ((discord: FakeDiscord) => ConfigOverrides);
    deps?: Partial<ChannelDeps>;
    prepare?: (discord: FakeDiscord) => void;
    /** How the fake is set up. */
    fake?: FakeDiscordOptions;
  } = {},
): Promise<Harness> {
  const discord = await startFakeDiscord(options.fake);
  options.prepare?.(discord);
  const overrides = typeof options.config === 'function' ? options.config(discord) : options.config;
  const config = DiscordConfigSchema.parse({ token: discord.token, apiUrl: discord.apiUrl, ...overrides });
  const channel = new DiscordChannel(config, testDeps(options.deps));
  try {
    await channel.start();
  } catch (error) {
    await discord.close();
    throw error;
  }
  const events = new EventReader(channel.events());
  return {
    discord,
    channel,
    events,
    async close() {
      await channel.stop();
      await discord.close();
    },
  };
}
