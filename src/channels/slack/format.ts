/**
 * From the agent's markdown to the mrkdwn parts Slack receives: credentials
 * redacted, markdown rendered, then split under the section block limit on
 * paragraph and code-block boundaries (src/channels/split.ts).
 */
import { splitMessage } from '../split.js';
import { BLANK, SECTION_TEXT_LIMIT } from './blocks.js';
import { markdownToMrkdwn } from './render.js';

/**
 * Room left under the section limit: split.ts counts the fence it adds when a
 * code block is cut, but a margin keeps a part valid whatever the edge case.
 */
const PART_LIMIT = SECTION_TEXT_LIMIT - 100;

/** Secrets shorter than this are too likely to match ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** Renders and splits outbound text. */
export class SlackFormatter {
  private readonly secrets: string[];

  constructor(secrets: string[]) {
    this.secrets = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH);
  }

  /** The text as one mrkdwn string (for short notices). */
  mrkdwn(markdown: string): string {
    return markdownToMrkdwn(this.redact(markdown));
  }

  /** The text as mrkdwn parts, each within a section block; at least one part. */
  parts(markdown: string): string[] {
    const rendered = this.mrkdwn(markdown);
    if (!rendered.trim()) return [BLANK];
    return splitMessage(rendered, PART_LIMIT);
  }

  private redact(text: string): string {
    return this.secrets.reduce((result, secret) => result.split(secret).join('[redacted]'), text);
  }
}
