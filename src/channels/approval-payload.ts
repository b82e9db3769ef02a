/**
 * Button payloads of approval prompts: only the opaque approval id and the
 * action, well under Telegram's 64-byte callback_data and Discord's 100-character
 * custom_id limits.
 */
import type { ApprovalAction } from './types.js';

const PREFIX = 'pa';
const CODES: Record<ApprovalAction, string> = { approve: 'y', always: 'a', deny: 'n' };
const ACTIONS: Record<string, ApprovalAction> = { y: 'approve', a: 'always', n: 'deny' };

/** `pa:<id>:<y|a|n>`. */
export function encodeApprovalPayload(approvalId: string, action: ApprovalAction): string {
  return `${PREFIX}:${approvalId}:${CODES[action]}`;
}

/** The id and action of a payload, or undefined when it is not an approval payload. */
export function decodeApprovalPayload(payload: string): { approvalId: string; action: ApprovalAction } | undefined {
  const match = /^pa:([A-Za-z0-9_-]{1,40}):([yan])$/.exec(payload);
  if (!match) return undefined;
  return { approvalId: match[1]!, action: ACTIONS[match[2]!]! };
}

/** Button labels, shared by every channel. */
export const APPROVAL_LABELS: Record<ApprovalAction, string> = {
  approve: 'Approve',
  always: 'Always allow',
  deny: 'Deny',
};
