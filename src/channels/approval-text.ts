/**
 * The words of an approval prompt and of its outcome, in markdown, shared by
 * every channel so that each one only decides how to show buttons.
 */
import type { ApprovalOutcome, ApprovalPrompt } from './types.js';

/** The prompt body: tool, what it will do, why, and the arguments. */
export function approvalPromptText(prompt: ApprovalPrompt): string {
  const lines = [`**Approval needed**: \`${prompt.tool}\``, prompt.summary];
  if (prompt.reason) lines.push(`Reason: ${prompt.reason}`);
  lines.push('```json', prompt.args, '```');
  const minutes = Math.max(1, Math.round((prompt.expiresAt - Date.now()) / 60_000));
  lines.push(`Only ${prompt.requestedBy.name} can answer. Expires in ${minutes} min.`);
  return lines.join('\n');
}

/** One line saying how the approval ended. */
export function approvalOutcomeLine(outcome: ApprovalOutcome): string {
  const by = outcome.by ? ` by ${outcome.by}` : '';
  switch (outcome.decision) {
    case 'approved':
      return `✅ Approved${by}`;
    case 'always':
      return `✅ Always allowed${by}`;
    case 'denied':
      return `❌ Denied${by}`;
    case 'expired':
      return '⌛ Expired (treated as denied)';
    case 'cancelled':
      return `🚫 Cancelled${by}`;
  }
}

/** The prompt as it reads once answered: the body without the expiry line, plus the outcome. */
export function approvalResolvedText(prompt: ApprovalPrompt, outcome: ApprovalOutcome): string {
  const body = approvalPromptText(prompt).split('\n').slice(0, -1).join('\n');
  return `${body}\n${approvalOutcomeLine(outcome)}`;
}
