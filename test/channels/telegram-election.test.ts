/**
 * Telegram polling by one elected instance: two channels on one fake Bot API
 * and one channel state, with an election held in memory. Only the holder of
 * the `telegram-poller` duty long-polls; the other stands by, healthy, and can
 * send. When the holder stops (and resigns) or loses the duty, the other takes
 * over from the persisted offset, without a 409 Conflict at any point.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TelegramChannel } from '../../src/channels/telegram/adapter.js';
import { POLLING_DUTY } from '../../src/channels/telegram/polling-duty.js';
import type { ChannelState, InboundEvent } from '../../src/channels/types.js';
import type { Election, Leadership } from '../../src/channels/election.js';
import { startFakeTelegram, waitFor, type FakeTelegram } from '../fakes/telegram/index.js';
import { ALICE, capturingLogger, dmOf, EventReader, FAST_OPTIONS, memoryState, testConfig, testDeps } from './telegram/helpers.js';

/** A campaign waiting for its duty. */
interface Candidate {
  member: string;
  grant(): void;
}

/** Duties held in memory, one holder each, granted in the order campaigns arrived. */
class MemoryElectorate {
  private readonly holders = new Map<string, { member: string; lost: AbortController }>();
  private readonly queues = new Map<string, Candidate[]>();

  /** The election as the instance `member` sees it. */
  member(member: string): Election {
    return { campaign: (duty, signal) => this.campaign(member, duty, signal) };
  }

  /** Who holds `duty` now. */
  holder(duty: string): string | undefined {
    return this.holders.get(duty)?.member;
  }

  /** The holder's lease lapses (it could not renew it): it loses the duty, and the next in line wins. */
  revoke(duty: string): void {
    const holder = this.holders.get(duty);
    this.holders.delete(duty);
    holder?.lost.abort(new Error('lease lapsed'));
    this.next(duty);
  }

  private campaign(member: string, duty: string, signal: AbortSignal): Promise<Leadership> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(duty) ?? [];
      this.queues.set(duty, queue);
      const withdraw = () => {
        queue.splice(queue.indexOf(candidate), 1);
        reject(signal.reason as Error);
      };
      const candidate: Candidate = {
        member,
        grant: () => {
          signal.removeEventListener('abort', withdraw);
          resolve(this.grant(duty, member));
        },
      };
      queue.push(candidate);
      signal.addEventListener('abort', withdraw, { once: true });
      this.next(duty);
    });
  }

  private next(duty: string): void {
    if (!this.holders.has(duty)) this.queues.get(duty)?.shift()?.grant();
  }

  private grant(duty: string, member: string): Leadership {
    const lost = new AbortController();
    this.holders.set(duty, { member, lost });
    return {
      lost: lost.signal,
      resign: () => {
        if (this.holders.get(duty)?.lost === lost) {
          this.holders.delete(duty);
          this.next(duty);
        }
        return Promise.resolve();
      },
    };
  }
}

/** One instance of the bot: its channel, what it received and what it logged. */
interface Instance {
  channel: TelegramChannel;
  events: EventReader;
  lines: string[];
}

let fake: FakeTelegram;
const running: TelegramChannel[] = [];
afterEach(async () => {
  for (const channel of running.splice(0)) await channel.stop();
  await fake.close();
});

async function startInstance(name: string, electorate: MemoryElectorate, state: ChannelState): Promise<Instance> {
  const lines: string[] = [];
  const deps = testDeps({ state, election: electorate.member(name), log: capturingLogger(lines) });
  const channel = new TelegramChannel(testConfig(fake), deps, { ...FAST_OPTIONS, owners: [`telegram:${ALICE.id}`] });
  running.push(channel);
  await channel.start();
  return { channel, events: new EventReader(channel.events()), lines };
}

function texts(events: readonly InboundEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'message' ? [event.text] : []));
}

function say(text: string): void {
  fake.sendUserMessage({ chat: dmOf(ALICE), from: ALICE, text });
}

/** The instance receives the message `text`. */
async function receives(instance: Instance, text: string): Promise<void> {
  await instance.events.next((event) => event.type === 'message' && event.text === text);
}

/** No 409 answered by the fake, and none logged by either instance. */
function expectNoConflict(...instances: Instance[]): void {
  expect(fake.conflicts).toBe(0);
  for (const instance of instances) expect(instance.lines.filter((line) => /\b409\b|Conflict/.test(line))).toEqual([]);
}

describe('Telegram polling by one elected instance', () => {
  it('polls on the elected instance only; the other starts as a healthy standby that can send', async () => {
    fake = await startFakeTelegram();
    const electorate = new MemoryElectorate();
    const state = memoryState();
    const a = await startInstance('a', electorate, state);
    const b = await startInstance('b', electorate, state);
    expect(electorate.holder(POLLING_DUTY)).toBe('a');

    say('hello');
    await receives(a, 'hello');
    // The standby is another reader, not ordered with a's stream: the strongest check is a second
    // message also reaching a, with no 409 (which a second poller would get) and nothing at b.
    say('marker');
    await receives(a, 'marker');
    expect(texts(a.events.seen)).toEqual(['hello', 'marker']);
    expect(texts(b.events.seen)).toEqual([]);
    expect(b.channel.health()).toEqual({ ready: true });
    expect(a.channel.health()).toEqual({ ready: true });

    await b.channel.send({ channel: 'telegram', chatId: String(ALICE.id) }, 'from the standby');
    expect(fake.chatMessages(ALICE.id).map((message) => message.plainText)).toContain('from the standby');
    expectNoConflict(a, b);
  });

  it('hands the long poll over when the holder stops: the other polls from where it stopped and gets the next message', async () => {
    fake = await startFakeTelegram();
    const electorate = new MemoryElectorate();
    const state = memoryState();
    const a = await startInstance('a', electorate, state);
    const b = await startInstance('b', electorate, state);
    say('one');
    await receives(a, 'one');

    await a.channel.stop();
    await waitFor(() => electorate.holder(POLLING_DUTY) === 'b', 2_000, 'b elected');
    say('two');
    // Updates come in order: 'one' handed over again would have come before 'two'.
    await receives(b, 'two');
    expect(texts(b.events.seen)).toEqual(['two']);
    expect(a.events.done).toBe(true);
    expectNoConflict(a, b);
  });

  it('stops polling at once when the duty is lost, stands by, and takes it back later without answering twice', async () => {
    fake = await startFakeTelegram();
    const electorate = new MemoryElectorate();
    const state = memoryState();
    const a = await startInstance('a', electorate, state);
    const b = await startInstance('b', electorate, state);
    say('one');
    await receives(a, 'one');

    electorate.revoke(POLLING_DUTY);
    expect(electorate.holder(POLLING_DUTY)).toBe('b');
    say('two');
    await receives(b, 'two');
    expect(a.channel.health()).toEqual({ ready: true });

    await b.channel.stop();
    await waitFor(() => electorate.holder(POLLING_DUTY) === 'a', 2_000, 'a elected again');
    say('three');
    // Updates come in order: 'two' handed over again would have come before 'three'.
    await receives(a, 'three');
    expect(texts(a.events.seen)).toEqual(['one', 'three']);
    expect(texts(b.events.seen)).toEqual(['two']);
    expect(a.lines.some((line) => line.includes('the polling duty was lost'))).toBe(true);
    expectNoConflict(a, b);
  });
});
