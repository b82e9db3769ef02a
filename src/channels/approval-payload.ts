/**
 * Button payloads and labels of prompts: a payload carries only the opaque
 * prompt id and a one-letter action, well under Telegram's 64-byte
 * callback_data and Discord's 100-character custom_id limits. The same letters
 * answer a prompt in the terminal.
 */
import type { PromptAction } from './types.js';

/** How every channel shows one action: its label, its letter, and its weight. */
export interface ActionView {
  label: string;
  /** One letter: the payload code and the terminal answer. */
  key: string;
  /** `primary`: the expected choice; `danger`: the refusing one. */
  style: 'primary' | 'secondary' | 'danger';
}

/** The view of every action, shared by every channel. */
export const ACTION_VIEWS: Record<PromptAction, ActionView> = {
  approve: { label: 'Approve', key: 'y', style: 'primary' },
  always: { label: 'Always allow', key: 'a', style: 'secondary' },
  deny: { label: 'Deny', key: 'n', style: 'danger' },
  continue: { label: 'Continue', key: 'c', style: 'primary' },
  stop: { label: 'Stop', key: 's', style: 'danger' },
  redirect: { label: 'Try another way', key: 't', style: 'secondary' },
};

const BY_KEY = new Map(Object.entries(ACTION_VIEWS).map(([action, view]) => [view.key, action as PromptAction]));

/** The action a letter stands for (`y` is approve), if any. */
export function actionOfKey(key: string): PromptAction | undefined {
  return BY_KEY.get(key);
}

/** `pa:<id>:<letter>`. */
export function encodeApprovalPayload(approvalId: string, action: PromptAction): string {
  return `pa:${approvalId}:${ACTION_VIEWS[action].key}`;
}

/** The id and action of a payload, or undefined when it is not a prompt's payload. */
export function decodeApprovalPayload(payload: string): { approvalId: string; action: PromptAction } | undefined {
  const match = /^pa:([A-Za-z0-9_-]{1,40}):([a-z])$/.exec(payload);
  const action = match ? actionOfKey(match[2]!) : undefined;
  return match && action ? { approvalId: match[1]!, action } : undefined;
}
