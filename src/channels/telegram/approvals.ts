/**
 * The inline keyboard of an approval prompt. Each button carries only the
 * approval id and the action (`pa:<id>:<y|a|n>`), within Telegram's 64-byte
 * callback_data limit.
 */
import type { InlineKeyboardMarkup } from 'grammy/types';
import { ChannelError } from '../../errors.js';
import { APPROVAL_LABELS, encodeApprovalPayload } from '../approval-payload.js';
import type { ApprovalAction, ApprovalPrompt } from '../types.js';

/** Telegram's limit on callback_data, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

/** A keyboard edit that removes every button. */
export const NO_KEYBOARD: InlineKeyboardMarkup = { inline_keyboard: [] };

/** Approve / Always allow (when offered) / Deny, in one row. */
export function approvalKeyboard(prompt: ApprovalPrompt): InlineKeyboardMarkup {
  const actions: ApprovalAction[] = prompt.allowAlways ? ['approve', 'always', 'deny'] : ['approve', 'deny'];
  const row = actions.map((action) => {
    const data = encodeApprovalPayload(prompt.id, action);
    if (Buffer.byteLength(data) > CALLBACK_DATA_LIMIT) {
      throw new ChannelError('telegram', `approval id too long for a button (${data.length} bytes)`);
    }
    return { text: APPROVAL_LABELS[action], callback_data: data };
  });
  return { inline_keyboard: [row] };
}
