/**
 * The buttons of a prompt (Approve / Always allow / Deny, or another set),
 * whose custom ids are the shared payloads (`pa:<id>:<letter>`, far below
 * Discord's 100-character custom_id limit).
 */
import { ButtonStyle, ComponentType } from 'discord.js';
import { ACTION_VIEWS, encodeApprovalPayload, type ActionView } from '../approval-payload.js';
import type { ApprovalPrompt } from '../types.js';
import type { ButtonRows } from './outbound.js';

const STYLES: Record<ActionView['style'], ButtonStyle.Success | ButtonStyle.Primary | ButtonStyle.Danger> = {
  primary: ButtonStyle.Success,
  secondary: ButtonStyle.Primary,
  danger: ButtonStyle.Danger,
};

/** The action row of a pending prompt. */
export function approvalButtons(prompt: ApprovalPrompt): ButtonRows {
  return [
    {
      type: ComponentType.ActionRow,
      components: prompt.actions.map((action) => ({
        type: ComponentType.Button,
        style: STYLES[ACTION_VIEWS[action].style],
        label: ACTION_VIEWS[action].label,
        custom_id: encodeApprovalPayload(prompt.id, action),
      })),
    },
  ];
}
