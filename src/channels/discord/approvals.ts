/**
 * The buttons of an approval prompt: Approve, Always allow (when offered) and
 * Deny, whose custom ids are the shared approval payloads (`pa:<id>:<y|a|n>`,
 * far below Discord's 100-character custom_id limit).
 */
import { ButtonStyle, ComponentType } from 'discord.js';
import { APPROVAL_LABELS, encodeApprovalPayload } from '../approval-payload.js';
import type { ApprovalAction, ApprovalPrompt } from '../types.js';
import type { ButtonRows } from './outbound.js';

const STYLES: Record<ApprovalAction, ButtonStyle.Success | ButtonStyle.Primary | ButtonStyle.Danger> = {
  approve: ButtonStyle.Success,
  always: ButtonStyle.Primary,
  deny: ButtonStyle.Danger,
};

/** The action row of a pending prompt. */
export function approvalButtons(prompt: ApprovalPrompt): ButtonRows {
  const actions: ApprovalAction[] = prompt.allowAlways ? ['approve', 'always', 'deny'] : ['approve', 'deny'];
  return [
    {
      type: ComponentType.ActionRow,
      components: actions.map((action) => ({
        type: ComponentType.Button,
        style: STYLES[action],
        label: APPROVAL_LABELS[action],
        custom_id: encodeApprovalPayload(prompt.id, action),
      })),
    },
  ];
}
