/**
 * A message's way into a thread shared by several instances: its durable inbox
 * on Redis, where the sender's rate and the thread's queue are counted for the
 * whole bot. The platform is told the message arrived once it is stored (or
 * refused); a refused sender is told why.
 */
import { acknowledge, type InboundMessage } from '../channels/types.js';
import type { ClusterThreads, Intake } from '../cluster/threads.js';
import { queueFullText, rateRefusal } from './inbound-limits.js';
import type { AgentServices } from './services.js';

/** Puts `event` in its shared thread's inbox, then acknowledges it; a refusal is explained (a rate one once in a while). */
export async function intakeShared(services: Pick<AgentServices, 'config' | 'outbox'>, cluster: ClusterThreads, event: InboundMessage, userId: string): Promise<void> {
  const { userMessagesPerMinute: perMinute, maxQueuedPerThread: maxQueued } = services.config.agent;
  let intake: Intake;
  try {
    intake = await cluster.intake(event, { userId, perMinute, maxQueued });
  } finally {
    acknowledge(event);
  }
  if (intake.kind === 'limited' && intake.notify) await services.outbox.send(event.chat, rateRefusal(perMinute, intake.retryAfterMs).text);
  if (intake.kind === 'full') await services.outbox.send(event.chat, queueFullText(intake.waiting));
}
