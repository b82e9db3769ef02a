/**
 * Shared setup of the Telegram channel tests: a fake Bot API, a real
 * TelegramChannel pointed at it, an in-memory channel state, and a reader of
 * the channel's event stream.
 */
import { Writable } from 'node:stream';
import type { Chat, User } from 'grammy/types';
import { TelegramConfigSchema, type Config } from '../../../src/config/schema.js';
import { createLogger, silentLogger, type Logger } from '../../../src/log.js';
import { TelegramChannel } from '../../../src/channels/telegram/adapter.js';
import type { TelegramChannelOptions } from '../../../src/channels/telegram/options.js';
import type { ChannelDeps, ChannelState, CommandSpec, InboundEvent } from '../../../src/channels/types.js';
import type { FakeTelegram } from '../../fakes/telegram/index.js';

/** Options that keep tests fast: short polls, no per-chat pacing, quick network retries. */
export const FAST_OPTIONS: TelegramChannelOptions = {
  pollingTimeoutSeconds: 2,
  pollingRetryDelayMs: 50,
  networkRetryDelayMs: 20,
  throttle: false,
};

/** The commands pincer registers, as the agent would pass them. */
export const COMMANDS: CommandSpec[] = [
  { name: 'stop', description: 'Stop the running turn' },
  { name: 'new', description: 'Start a fresh conversation' },
  { name: 'status', description: 'Thread status' },
  { name: 'policy', description: 'Admin tool policy', who: 'admin', subcommands: [{ name: 'list', description: 'List' }, { name: 'allow', description: 'Allow', args: [{ name: 'tool', description: 'Tool', kind: 'word', required: true }] }] },
];

/** A ChannelState kept in memory, with TTLs; share one between two channels to simulate a restart. */
export function memoryState(): ChannelState & { entries: Map<string, unknown> } {
  const entries = new Map<string, unknown>();
  const expiries = new Map<string, number>();
  return {
    entries,
    get: (key) => {
      const expiry = expiries.get(key);
      if (expiry !== undefined && expiry < Date.now()) entries.delete(key);
      return Promise.resolve(entries.get(key));
    },
    set: (key, value, ttlMs) => {
      entries.set(key, value);
      if (ttlMs) expiries.set(key, Date.now() + ttlMs);
      return Promise.resolve();
    },
    update: (key, change) => {
      const next = change(structuredClone(entries.get(key)));
      if (next === undefined) entries.delete(key);
      else entries.set(key, next);
      return Promise.resolve(next);
    },
  };
}

/** Channel deps for tests. */
export function testDeps(overrides: Partial<ChannelDeps> = {}): ChannelDeps {
  return { log: silentLogger, commands: COMMANDS, completions: () => [], state: memoryState(), ...overrides };
}

/** The `telegram` config section pointed at the fake. */
export function testConfig(fake: FakeTelegram, overrides: Partial<Config['telegram']> = {}): Config['telegram'] {
  return { ...TelegramConfigSchema.parse({ token: fake.token, apiRoot: fake.apiRoot }), ...overrides };
}

/** A started channel and a reader of its events. */
export interface Harness {
  channel: TelegramChannel;
  events: EventReader;
}

/** Starts a channel against `fake`. */
export async function startChannel(
  fake: FakeTelegram,
  setup: { config?: Partial<Config['telegram']>; deps?: Partial<ChannelDeps>; options?: TelegramChannelOptions } = {},
): Promise<Harness> {
  const channel = new TelegramChannel(testConfig(fake, setup.config), testDeps(setup.deps), { ...FAST_OPTIONS, ...setup.options });
  await channel.start();
  return { channel, events: new EventReader(channel.events()) };
}

/** Collects events from a stream and waits for the ones a test expects. */
export class EventReader {
  readonly seen: InboundEvent[] = [];
  private ended = false;

  constructor(stream: AsyncIterable<InboundEvent>) {
    void (async () => {
      for await (const event of stream) this.seen.push(event);
      this.ended = true;
    })();
  }

  /** Whether the stream has ended. */
  get done(): boolean {
    return this.ended;
  }

  /** The first event (from `from` on) matching `match`, waiting up to `timeoutMs`. */
  async next<T extends InboundEvent = InboundEvent>(match: (event: InboundEvent) => boolean = () => true, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.seen.find(match);
      if (found) return found as T;
      if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms (seen: ${this.seen.length})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** Sample people and chats. */
export const ALICE: User = { id: 1001, is_bot: false, first_name: 'Alice', last_name: 'Liddell', username: 'alice' };
export const BOB: User = { id: 1002, is_bot: false, first_name: 'Bob' };
export const OTHER_BOT: User = { id: 9001, is_bot: true, first_name: 'Other', username: 'other_bot' };

/** The private chat of a user (chat id = user id). */
export function dmOf(user: User): Chat {
  return { id: user.id, type: 'private', first_name: user.first_name } as Chat;
}

/** A supergroup. */
export function supergroup(id = -1001234567890, title = 'Team Room'): Chat {
  return { id, type: 'supergroup', title } as Chat;
}

/** A logger writing JSON lines into `lines`, to check what gets logged. */
export function capturingLogger(lines: string[], secrets: string[] = []): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return createLogger({ level: 'debug', pretty: false, secrets, destination: sink });
}

/** Sleeps. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
