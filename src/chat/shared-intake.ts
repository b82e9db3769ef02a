/**
 * A message's way into a thread shared by several instances: its durable inbox
 * on Redis, where the sender's rate and the thread's queue are counted for the
 * whole bot. The platform is told the message arrived once it is stored (or
 * refused); a refused sender is told why. An oversized message is not kept,
 * but its refusal is a reply: it counts against the sender's rate as well.
 */
import { acknowledge, type InboundMessage } from '../channels/types.js';
import type { Intake } from '../cluster/threads.js';
import { queueFullText, rateRefusal, withinRate, type Refusal } from '../engine/inbound-limits.js';
import type { AgentServices } from '../engine/services.js';

/** Puts `event` in its shared thread's inbox, then acknowledges it; a refusal is explained (a rate one once a window). */
export async function intakeShared(
  services: Pick<AgentServices, 'config' | 'outbox'>,
  cluster: Pick<NonNullable<AgentServices['cluster']>, 'threads' | 'senderRate'>,
  event: InboundMessage,
  userId: string,
  oversized?: Refusal,
): Promise<void> {
  const send = (text: string) => services.outbox.send(event.chat, text);
  if (oversized) {
    acknowledge(event);
    await withinRate(cluster.senderRate, userId, () => send(oversized.text), send);
    return;
  }
  const { userMessagesPerMinute: perMinute, maxQueuedPerThread: maxQueued } = services.config.agent;
  let intake: Intake;
  try {
    intake = await cluster.threads.intake(event, { userId, perMinute, maxQueued });
  } finally {
    acknowledge(event);
  }
  if (intake.kind === 'limited' && intake.notify) await send(rateRefusal(perMinute, intake.retryAfterMs).text);
  if (intake.kind === 'full') await send(queueFullText(intake.waiting));
}
