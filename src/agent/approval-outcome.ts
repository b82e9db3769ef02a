/**
 * Showing how an approval ended: its prompt is edited to say so and loses its
 * buttons. One routine for every path that ends an approval (answer, expiry,
 * /stop, a new message, a prompt found stale after a restart).
 */
import type { ApprovalOutcome } from '../channels/types.js';
import { promptOf, type PendingApproval } from './approvals.js';
import type { AgentServices } from './services.js';

/** The outcome view of an approval status, for editing the prompt. */
export function outcomeOf(approval: PendingApproval): ApprovalOutcome {
  const decision = approval.status === 'pending' ? 'cancelled' : approval.status;
  return approval.decidedBy ? { decision, by: approval.decidedBy } : { decision };
}

/**
 * Edits the approval's prompt to show its outcome. Cosmetic: a failure is
 * logged and never stops the turn that goes on after the approval.
 */
export async function showApprovalOutcome(services: Pick<AgentServices, 'approvals' | 'outbox' | 'log'>, approval: PendingApproval): Promise<void> {
  try {
    const shown = await services.approvals.promptLocation(approval);
    if (shown) await services.outbox.resolveApproval(shown, promptOf(approval), outcomeOf(approval));
  } catch (error) {
    services.log.warn({ err: error, thread: approval.threadKey }, 'approval prompt not updated');
  }
}
