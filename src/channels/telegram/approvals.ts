/**
 * The inline keyboard of a prompt. Each button carries only the prompt id and
 * the action's letter (`pa:<id>:<y|a|n|...>`), within Telegram's 64-byte
 * callback_data limit.
 */
import type { InlineKeyboardMarkup } from 'grammy/types';
import { ChannelError } from '../../errors.js';
import { ACTION_VIEWS, encodeApprovalPayload } from '../approval-payload.js';
import type { ApprovalPrompt } from '../types.js';

/** Telegram's limit on callback_data, in bytes. */
export const CALLBACK_DATA_LIMIT = 64;

/** A keyboard edit that removes every button. */
export const NO_KEYBOARD: InlineKeyboardMarkup = { inline_keyboard: [] };

/** The prompt's choices, in one row. */
export function approvalKeyboard(prompt: ApprovalPrompt): InlineKeyboardMarkup {
  const row = prompt.actions.map((action) => {
    const data = encodeApprovalPayload(prompt.id, action);
    if (Buffer.byteLength(data) > CALLBACK_DATA_LIMIT) {
      throw new ChannelError('telegram', `approval id too long for a button (${data.length} bytes)`);
    }
    return { text: ACTION_VIEWS[action].label, callback_data: data };
  });
  return { inline_keyboard: [row] };
}
