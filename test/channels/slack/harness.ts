/**
 * A started SlackChannel (the real Bolt app) against a fake Slack, with a
 * few users and conversations, and a recorder of the events it yields.
 */
import { SlackConfigSchema, type Config } from '../../../src/config/schema.js';
import { SlackChannel, type SlackChannelOptions } from '../../../src/channels/slack/adapter.js';
import type { ChannelState, InboundEvent } from '../../../src/channels/types.js';
import { silentLogger } from '../../../src/log.js';
import { startFakeSlack, type FakeSlack } from '../../fakes/slack/index.js';

/** Retries fast enough that a test never waits on the production policy. */
export const FAST_RETRIES = { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 50 };

/** A workspace admin, with a DM. */
export const ALICE = { id: 'U1ALICE', name: 'Alice' };
/** A regular member. */
export const BOB = { id: 'U2BOB', name: 'Bob' };
/** Conversations: Alice's DM, a public channel and a private one. */
export const DM_ALICE = 'D1ALICE';
export const GENERAL = 'C1GENERAL';
export const PRIVATE = 'G1PRIVATE';

/** A ChannelState in memory. */
export function memoryState(): ChannelState & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return {
    values,
    get: async (key) => values.get(key),
    set: async (key, value) => void values.set(key, value),
  };
}

/** Collects a channel's events as they arrive. */
export class EventRecorder {
  readonly events: InboundEvent[] = [];
  private readonly done: Promise<void>;

  constructor(stream: AsyncIterable<InboundEvent>) {
    this.done = (async () => {
      for await (const event of stream) this.events.push(event);
    })();
  }

  /** Waits until `count` events arrived, and returns them. */
  async waitFor(count: number, timeoutMs = 5_000): Promise<InboundEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} events, got ${this.events.length}: ${JSON.stringify(this.events)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.events.slice(0, count);
  }

  /**
   * Every event so far, once the caller has seen the envelopes acknowledged: Socket Mode acknowledges
   * an event only after its listeners ran (slack/connection.ts), so what they yield is queued by then,
   * and one turn of the event loop lets this recorder take it. Not a wait for "nothing more".
   */
  async acknowledged(): Promise<InboundEvent[]> {
    await new Promise((resolve) => setImmediate(resolve));
    return [...this.events];
  }

  /** Resolves once the stream has ended. */
  ended(): Promise<void> {
    return this.done;
  }
}

/** A started channel on a fresh fake. */
export interface Harness {
  fake: FakeSlack;
  channel: SlackChannel;
  recorder: EventRecorder;
  state: ReturnType<typeof memoryState>;
  config: Config['slack'];
  close(): Promise<void>;
}

/** Adds the usual users and conversations to a fake. */
export function populate(fake: FakeSlack): void {
  fake.addUser({ ...ALICE, isAdmin: true });
  fake.addUser(BOB);
  fake.addUser({ id: 'U3OTHERBOT', name: 'Other bot', isBot: true });
  fake.addConversation({ id: DM_ALICE, type: 'im', user: ALICE.id });
  fake.addConversation({ id: GENERAL, type: 'channel', name: 'general' });
  fake.addConversation({ id: PRIVATE, type: 'group', name: 'secret-plans' });
}

/** Starts a fake, a channel configured for it, and an event recorder. */
export async function startHarness(
  overrides: Partial<Config['slack']> = {},
  options: SlackChannelOptions = {},
  fakeOrNew?: FakeSlack,
): Promise<Harness> {
  const fake = fakeOrNew ?? (await startFakeSlack());
  if (!fakeOrNew) populate(fake);
  const config = SlackConfigSchema.parse({ botToken: fake.botToken, appToken: fake.appToken, apiUrl: fake.apiUrl, ...overrides });
  const state = memoryState();
  const channel = new SlackChannel(
    config,
    { log: silentLogger, commands: [], completions: () => [], state },
    { clientRetries: FAST_RETRIES, ...options },
  );
  await channel.start();
  const recorder = new EventRecorder(channel.events());
  return {
    fake,
    channel,
    recorder,
    state,
    config,
    close: async () => {
      await channel.stop();
      if (!fakeOrNew) await fake.close();
    },
  };
}
