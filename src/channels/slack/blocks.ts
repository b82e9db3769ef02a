/**
 * Block Kit payloads pincer posts: one mrkdwn section per message part, and the
 * approval prompt (a section plus an actions block of buttons).
 */
import { ACTION_VIEWS, encodeApprovalPayload } from '../approval-payload.js';
import type { ApprovalPrompt, PromptAction } from '../types.js';

/** Slack's limit on the text of one section block. */
export const SECTION_TEXT_LIMIT = 3000;

/** The `block_id` of an approval prompt's buttons, so a resolved prompt is recognisable. */
export const APPROVAL_BLOCK_ID = 'pincer_approval';

/** A block of the subset of Block Kit pincer uses. */
export type SlackBlock = SectionBlock | ActionsBlock;

/** A section of mrkdwn text. */
export interface SectionBlock {
  type: 'section';
  text: { type: 'mrkdwn'; text: string };
}

/** A row of buttons. */
export interface ActionsBlock {
  type: 'actions';
  block_id: string;
  elements: ButtonElement[];
}

/** A button whose `action_id` and `value` carry the approval payload. */
export interface ButtonElement {
  type: 'button';
  action_id: string;
  value: string;
  text: { type: 'plain_text'; text: string };
  style?: 'primary' | 'danger';
}

/**
 * A mrkdwn section. Text past the section limit is cut (callers split first);
 * an empty text becomes a zero-width space, which Slack accepts where it rejects ''.
 */
export function sectionBlock(text: string): SectionBlock {
  const bounded = text.length > SECTION_TEXT_LIMIT ? `${text.slice(0, SECTION_TEXT_LIMIT - 1)}…` : text;
  return { type: 'section', text: { type: 'mrkdwn', text: bounded || BLANK } };
}

/** What an emptied message part shows: nothing visible. */
export const BLANK = '\u200b';

/** The buttons of a prompt, one per choice it offers. */
export function approvalActionsBlock(prompt: ApprovalPrompt): ActionsBlock {
  return { type: 'actions', block_id: APPROVAL_BLOCK_ID, elements: prompt.actions.map((action) => button(prompt.id, action)) };
}

function button(approvalId: string, action: PromptAction): ButtonElement {
  const payload = encodeApprovalPayload(approvalId, action);
  const element: ButtonElement = {
    type: 'button',
    action_id: payload,
    value: payload,
    text: { type: 'plain_text', text: ACTION_VIEWS[action].label },
  };
  const { style } = ACTION_VIEWS[action];
  if (style !== 'secondary') element.style = style;
  return element;
}
