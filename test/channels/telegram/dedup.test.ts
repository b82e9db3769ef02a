import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message, Update } from 'grammy/types';
import { TelegramChannel } from '../../../src/channels/telegram/adapter.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../../fakes/telegram/index.js';
import { ALICE, EventReader, FAST_OPTIONS, dmOf, memoryState, sleep, testConfig, testDeps } from './helpers.js';

describe('Telegram update deduplication', () => {
  let fake: FakeTelegram;
  const running: TelegramChannel[] = [];

  async function start(state: ReturnType<typeof memoryState>): Promise<{ channel: TelegramChannel; events: EventReader }> {
    const channel = new TelegramChannel(testConfig(fake), testDeps({ state }), FAST_OPTIONS);
    running.push(channel);
    await channel.start();
    return { channel, events: new EventReader(channel.events()) };
  }

  function textMessage(text: string): Omit<Update, 'update_id'> {
    return { message: { message_id: 1, date: 1, chat: dmOf(ALICE), from: ALICE, text } as Message } as Omit<Update, 'update_id'>;
  }

  beforeEach(async () => {
    fake = await startFakeTelegram();
  });

  afterEach(async () => {
    for (const channel of running.splice(0)) await channel.stop();
    await fake.close();
  });

  it('handles an update delivered twice only once', async () => {
    const { events } = await start(memoryState());
    fake.injectUpdate({ ...textMessage('once'), update_id: 42 });
    await events.next();
    fake.injectUpdate({ ...textMessage('once'), update_id: 42 });
    fake.injectUpdate({ ...textMessage('marker'), update_id: 43 });
    await events.next((e) => e.type === 'message' && e.text === 'marker');
    expect(events.seen.map((e) => (e.type === 'message' ? e.text : ''))).toEqual(['once', 'marker']);
  });

  it('skips, after a restart with a new adapter, an update the previous one handled', async () => {
    const state = memoryState();
    const first = await start(state);
    const { updateId } = fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'before restart' });
    await first.events.next();
    await first.channel.stop();

    const second = await start(state);
    // Telegram hands the same update over again (e.g. its confirmation was lost), then a new one arrives.
    await sleep(50);
    fake.injectUpdate({ ...textMessage('before restart'), update_id: updateId });
    await waitFor(() => fake.deliveries(updateId) === 2, 2000, 'redelivery');
    fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'after restart' });
    // Updates are handled one after another: the redelivered one was skipped or seen before this one.
    await second.events.next((e) => e.type === 'message' && e.text === 'after restart');
    expect(second.events.seen.map((e) => (e.type === 'message' ? e.text : ''))).toEqual(['after restart']);
  });

  it('resumes polling from the persisted offset, confirming what was handled', async () => {
    const state = memoryState();
    const first = await start(state);
    const { updateId } = fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text: 'one' });
    await first.events.next();
    await waitFor(() => [...state.entries.values()].includes(updateId), 2000, 'persisted update id');
    await first.channel.stop();

    const pollsBefore = fake.calls.filter((call) => call.method === 'getUpdates').length;
    await start(state);
    const firstPoll = await waitFor(
      () => fake.calls.filter((call) => call.method === 'getUpdates')[pollsBefore],
      2000,
      'first poll of the new adapter',
    );
    expect(firstPoll.payload.offset).toBe(updateId + 1);
  });
});
