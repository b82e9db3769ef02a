/**
 * The words of a prompt and of its outcome, in markdown, shared by every
 * channel so that each one only decides how to show buttons.
 */
import type { ApprovalOutcome, ApprovalPrompt } from './types.js';

/** The prompt body: headline, what it is about, why, the arguments, who may answer. */
export function approvalPromptText(prompt: ApprovalPrompt): string {
  const lines = [prompt.tool ? `**${prompt.title}**: \`${prompt.tool}\`` : `**${prompt.title}**`];
  if (prompt.grant) lines.push(...prompt.grant.split('\n').map((line) => `**${line}**`));
  lines.push(prompt.summary);
  if (prompt.reason) lines.push(`Reason: ${prompt.reason}`);
  if (prompt.args !== undefined) lines.push('```json', prompt.args, '```');
  const minutes = Math.max(1, Math.round((prompt.expiresAt - Date.now()) / 60_000));
  lines.push(`Only ${prompt.requestedBy.name} can answer. Expires in ${minutes} min.`);
  return lines.join('\n');
}

const DECISION_LINES: Record<Exclude<ApprovalOutcome['decision'], 'expired'>, string> = {
  approved: '✅ Approved',
  always: '✅ Always allowed',
  denied: '❌ Denied',
  continued: '▶️ Continued',
  stopped: '⏹️ Stopped',
  redirected: '↪️ Trying another way',
  cancelled: '🚫 Cancelled',
};

/** One line saying how the prompt ended. */
export function approvalOutcomeLine(outcome: ApprovalOutcome): string {
  if (outcome.decision === 'expired') return `⌛ Expired (treated as ${outcome.expiredAs ?? 'denied'})`;
  return `${DECISION_LINES[outcome.decision]}${outcome.by ? ` by ${outcome.by}` : ''}`;
}

/** The prompt as it reads once answered: the body without the expiry line, plus the outcome. */
export function approvalResolvedText(prompt: ApprovalPrompt, outcome: ApprovalOutcome): string {
  const body = approvalPromptText(prompt).split('\n').slice(0, -1).join('\n');
  return `${body}\n${approvalOutcomeLine(outcome)}`;
}
