/**
 * The intake of an instance among several on one Redis: a message goes to its
 * thread's durable inbox on Redis, where the sender's rate and the thread's
 * queue are counted for the whole bot. The platform is told the message
 * arrived once it is stored (or refused); a refused sender is told why. An
 * oversized message is not kept, but its refusal is a reply: it counts against
 * the sender's rate as well. The thread's holder (or the first free instance)
 * reads the inbox and hands the entries to its runner.
 */
import { acknowledge, type InboundMessage } from '../channels/types.js';
import type { Config } from '../config/schema.js';
import type { ThreadHost, ThreadIntake } from '../deployment/types.js';
import { fromQueued } from '../engine/inbox.js';
import { InboundLimiter, queueFullText, rateRefusal, withinRate, type Refusal, type SenderRate } from '../engine/inbound-limits.js';
import type { Outbox } from '../engine/outbox.js';
import type { ClusterThreads, Intake } from './threads.js';

/** The intake of shared threads. `outbox` is read once the runtime starts. */
export class ClusterIntake implements ThreadIntake {
  private host: ThreadHost | undefined;
  /** Sizes only: the rate is counted in Redis. */
  private readonly sizes: InboundLimiter;

  constructor(
    private readonly threads: ClusterThreads,
    private readonly senderRate: SenderRate,
    private readonly agent: Config['agent'],
    private readonly outbox: () => Outbox,
  ) {
    this.sizes = new InboundLimiter(agent.userMessagesPerMinute, agent.maxInboundChars);
  }

  start(host: ThreadHost): Promise<void> {
    this.host = host;
    this.threads.start({
      takeOver: (thread) => host.takeOver(thread, true),
      deliver: (thread, entries) => host.deliver(thread, entries.map((entry) => fromQueued(entry.message, entry.chat)), entries.map((entry) => entry.message)),
      spare: () => host.spare(),
      busy: (thread) => host.busy(thread),
      forget: (thread) => host.forget(thread),
      flush: (thread) => host.flush(thread),
      lost: (thread) => host.lost(thread),
    });
    return Promise.resolve();
  }

  accept(event: InboundMessage, userId: string): boolean {
    this.started().track(this.keepShared(event, userId, this.sizes.checkSize(event.text)?.refusal));
    return true;
  }

  keep(event: InboundMessage): boolean {
    this.started().track(this.threads.intake(event).finally(() => acknowledge(event)));
    return true;
  }

  holds(thread: string): boolean {
    return this.threads.holds(thread);
  }

  claim(thread: string): Promise<boolean> {
    return this.threads.claim(thread);
  }

  idle(thread: string): Promise<void> {
    return this.threads.idle(thread);
  }

  stopTaking(): void {
    this.threads.stopTaking();
  }

  giveBack(): Promise<void> {
    return this.threads.giveBack();
  }

  /** Puts `event` in its shared thread's inbox, then acknowledges it; a refusal is explained (a rate one once a window). */
  private async keepShared(event: InboundMessage, userId: string, oversized?: Refusal): Promise<void> {
    const send = (text: string) => this.outbox().send(event.chat, text);
    if (oversized) {
      acknowledge(event);
      await withinRate(this.senderRate, userId, () => send(oversized.text), send);
      return;
    }
    const { userMessagesPerMinute: perMinute, maxQueuedPerThread: maxQueued } = this.agent;
    let intake: Intake;
    try {
      intake = await this.threads.intake(event, { userId, perMinute, maxQueued });
    } finally {
      acknowledge(event);
    }
    if (intake.kind === 'limited' && intake.notify) await send(rateRefusal(perMinute, intake.retryAfterMs).text);
    if (intake.kind === 'full') await send(queueFullText(intake.waiting));
  }

  private started(): ThreadHost {
    if (!this.host) throw new Error('the intake has not started');
    return this.host;
  }
}
