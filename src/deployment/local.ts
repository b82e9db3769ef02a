/**
 * One process on its own store (SQLite, Postgres): messages are kept in their
 * thread's record, senders' rates counted in memory, timers and work queues
 * run in this process, claims and thread records live in the store, and there
 * is no other instance to signal.
 */
import { threadKeyOf, type InboundMessage } from '../channels/types.js';
import type { Config } from '../config/schema.js';
import { LocalCostBudget } from '../engine/budget.js';
import { InboundLimiter, queueFullText } from '../engine/inbound-limits.js';
import { keepInInbox } from '../engine/inbox.js';
import type { AgentServices } from '../engine/services.js';
import { KeyvThreadStorage } from '../engine/thread-log.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { InProcessTimers } from '../store/timers.js';
import { StoreClaims } from './claims.js';
import type { Deployment, Signals, ThreadHost, ThreadIntake } from './types.js';
import { InProcessEngine } from './work-queue.js';

/** What the intake of one process uses. */
export type LocalIntakeServices = Pick<AgentServices, 'config' | 'history' | 'journal' | 'outbox' | 'log'>;

/** A single process's deployment. `services` is read once the runtime starts (the intake needs the history and the outbox). */
export function localDeployment(config: Config, store: Store, log: Logger, services: () => LocalIntakeServices): Deployment {
  const limiter = new InboundLimiter(config.agent.userMessagesPerMinute, config.agent.maxInboundChars);
  const signals: Signals = {
    stop: () => Promise.resolve(),
    onStop: () => undefined,
    onSettingsChanged: () => undefined,
    mail: () => Promise.resolve(),
    onMail: () => undefined,
  };
  return {
    kind: 'single',
    intake: new LocalIntake(limiter, services),
    signals,
    senderRate: limiter,
    threadStorage: new KeyvThreadStorage(store, log),
    costBudget: (usage, limitUsd, ttlMs) => new LocalCostBudget(usage, limitUsd, ttlMs),
    timers: () => new InProcessTimers(),
    claims: (name, ttlMs) => new StoreClaims(store, name, ttlMs),
    workQueue: (_name, maxParallel) => new InProcessEngine(maxParallel),
    channel: () => Promise.resolve({}),
    close: () => Promise.resolve(),
  };
}

/**
 * The intake of one process: a message over its sender's rate or its thread's
 * queue is refused with a notice; an accepted one is kept in its thread's
 * inbox (the record, written in the background in order with the thread's
 * other writes), then handed to the thread's runner. At start, the threads the
 * previous run left unfinished are picked up, before any new event is read.
 */
class LocalIntake implements ThreadIntake {
  private host: ThreadHost | undefined;

  constructor(
    private readonly limiter: InboundLimiter,
    private readonly services: () => LocalIntakeServices,
  ) {}

  async start(host: ThreadHost): Promise<void> {
    this.host = host;
    const { journal, log } = this.services();
    for (const key of await journal.load()) {
      try {
        await host.takeOver(key, false);
      } catch (error) {
        log.error({ err: error, thread: key }, 'could not resume the thread after the restart');
      }
    }
  }

  accept(event: InboundMessage, userId: string): boolean {
    const host = this.started();
    const services = this.services();
    const limited = this.limiter.check(userId, event.text);
    if (limited) {
      if (limited.notify) host.track(services.outbox.send(event.chat, limited.refusal.text));
      return false;
    }
    const key = threadKeyOf(event.chat);
    const waiting = host.queued(key);
    if (waiting >= services.config.agent.maxQueuedPerThread) {
      host.track(services.outbox.send(event.chat, queueFullText(waiting)));
      return false;
    }
    host.track(keepInInbox(services, key, event));
    host.deliver(key, [event], []);
    return false;
  }

  keep(event: InboundMessage): boolean {
    this.started().track(keepInInbox(this.services(), threadKeyOf(event.chat), event));
    return false;
  }

  holds(): boolean {
    return true;
  }

  idle(): Promise<void> {
    return Promise.resolve();
  }

  private started(): ThreadHost {
    if (!this.host) throw new Error('the intake has not started');
    return this.host;
  }
}
