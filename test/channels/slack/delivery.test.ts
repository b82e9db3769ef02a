import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import { ALICE, DM_ALICE, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('SlackChannel delivery under failures', () => {
  it('waits out a 429 for its Retry-After and posts the message exactly once', async () => {
    harness = await startHarness();
    const { fake, channel } = harness;
    fake.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
    const sent = await channel.send({ channel: 'slack', chatId: DM_ALICE }, 'after the rate limit');
    const calls = fake.callsOf('chat.postMessage');
    expect(calls.map((call) => call.status)).toEqual([429, 200]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
    const posted = fake.botMessages(DM_ALICE).filter((message) => message.text === 'after the rate limit');
    expect(posted.map((message) => message.ts)).toEqual(sent.ids);
  });

  it('retries a server error and posts once', async () => {
    harness = await startHarness();
    const { fake, channel } = harness;
    fake.failNext('chat.postMessage', { status: 503 });
    await channel.send({ channel: 'slack', chatId: DM_ALICE }, 'despite a 503');
    expect(fake.callsOf('chat.postMessage').map((call) => call.status)).toEqual([503, 200]);
    expect(fake.botMessages(DM_ALICE)).toHaveLength(1);
  });

  it('gives up with a retryable ChannelError when the failures outlast the retry policy', async () => {
    harness = await startHarness();
    const { fake, channel } = harness;
    fake.failNext('chat.postMessage', { status: 500 }, 5);
    await expect(channel.send({ channel: 'slack', chatId: DM_ALICE }, 'lost cause')).rejects.toMatchObject({ name: 'ChannelError', retryable: true });
    expect(fake.botMessages(DM_ALICE)).toHaveLength(0);
  });

  it('lets a new adapter take over the same workspace after a restart', async () => {
    harness = await startHarness();
    const { fake } = harness;
    await harness.channel.stop();
    await fake.waitFor(() => fake.socketConnections.open === 0, 3_000, 'the first connection to close');
    const second = await startHarness({}, {}, fake);
    try {
      await fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'after the restart' });
      const [event] = (await second.recorder.waitFor(1)) as InboundMessage[];
      expect(event!.text).toBe('after the restart');
      expect(harness.recorder.events).toHaveLength(0);
    } finally {
      await second.close();
    }
  });

  it('reconnects when Slack asks it to, opening a new connection, and loses no event meanwhile', async () => {
    harness = await startHarness();
    const { fake, recorder } = harness;
    expect(fake.callsOf('apps.connections.open')).toHaveLength(1);
    fake.requestReconnect();
    await fake.waitFor(() => fake.socketConnections.open === 0, 3_000, 'the old connection to close');
    const pending = fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'sent while reconnecting', ackTimeoutMs: 15_000 });
    await fake.waitFor(() => fake.socketConnections.open === 1, 15_000, 'the reconnection');
    await pending;
    expect(fake.callsOf('apps.connections.open')).toHaveLength(2);
    const [event] = (await recorder.waitFor(1)) as InboundMessage[];
    expect(event!.text).toBe('sent while reconnecting');
  }, 20_000);
});
