/**
 * From the agent's markdown (already redacted by the agent's outbox) to the
 * mrkdwn parts Slack receives: markdown rendered, then split under the section
 * block limit on paragraph and code-block boundaries (../split.ts).
 */
import { splitMessage } from '../split.js';
import { BLANK, SECTION_TEXT_LIMIT } from './blocks.js';
import { markdownToMrkdwn } from './render.js';

/**
 * Room left under the section limit: split.ts counts the fence it adds when a
 * code block is cut, but a margin keeps a part valid whatever the edge case.
 */
const PART_LIMIT = SECTION_TEXT_LIMIT - 100;

/** The text as mrkdwn parts, each within a section block; at least one part. */
export function mrkdwnParts(markdown: string): string[] {
  const rendered = markdownToMrkdwn(markdown);
  if (!rendered.trim()) return [BLANK];
  return splitMessage(rendered, PART_LIMIT);
}
