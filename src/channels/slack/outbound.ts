/**
 * Where a reply leaves for Slack: each part of a rendered answer is its own
 * message (mrkdwn `text` as the fallback plus one section block), posted in the
 * conversation's thread when it has one. Edits update parts in place, post the
 * parts an answer grew, and blank the parts it no longer needs.
 */
import { approvalPromptText, approvalResolvedText } from '../approval-text.js';
import type { ApprovalOutcome, ApprovalPrompt, ChatAddress, SentMessage } from '../types.js';
import { approvalActionsBlock, BLANK, sectionBlock } from './blocks.js';
import { SLACK } from './chat.js';
import type { SlackFormatter } from './format.js';
import type { SlackWebApi } from './web-api.js';

const REMEMBERED_PARTS = 2_000;

/** Posts and edits the bot's messages. */
export class SlackOutbox {
  /** Last text of recent parts, so that an edit skips the parts it does not change. */
  private readonly shown = new Map<string, string>();

  constructor(
    private readonly api: SlackWebApi,
    private readonly formatter: SlackFormatter,
  ) {}

  /** Posts `markdown` as one or more messages, in order. */
  async send(chat: ChatAddress, markdown: string): Promise<SentMessage> {
    const address = addressOf(chat);
    const ids: string[] = [];
    for (const part of this.formatter.parts(markdown)) ids.push(await this.post(address, part));
    return { chat: address, ids };
  }

  /** Replaces the text of a sent message: changed parts updated, new parts posted, surplus parts blanked. */
  async edit(message: SentMessage, markdown: string): Promise<SentMessage> {
    const parts = this.formatter.parts(markdown);
    const ids = [...message.ids];
    for (const [index, part] of parts.entries()) {
      const ts = ids[index];
      if (ts) await this.update(message.chat, ts, part);
      else ids.push(await this.post(message.chat, part));
    }
    for (const ts of ids.slice(parts.length)) await this.update(message.chat, ts, BLANK);
    return { chat: addressOf(message.chat), ids };
  }

  /** Posts an approval prompt: its text and the Approve / Always allow / Deny buttons. */
  async sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    const address = addressOf(chat);
    const text = this.formatter.mrkdwn(approvalPromptText(prompt));
    const ts = await this.api.postMessage({
      channel: address.chatId,
      text,
      blocks: [sectionBlock(text), approvalActionsBlock(prompt)],
      threadTs: address.subId,
    });
    return { chat: address, ids: [ts] };
  }

  /** Rewrites a prompt to its outcome; the buttons go with the actions block. */
  async resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    const ts = message.ids[0];
    if (!ts) return;
    const text = this.formatter.mrkdwn(approvalResolvedText(prompt, outcome));
    await this.api.update(message.chat.chatId, ts, text, [sectionBlock(text)]);
  }

  private async post(chat: ChatAddress, part: string): Promise<string> {
    const ts = await this.api.postMessage({ channel: chat.chatId, text: part, blocks: [sectionBlock(part)], threadTs: chat.subId });
    this.remember(chat, ts, part);
    return ts;
  }

  private async update(chat: ChatAddress, ts: string, part: string): Promise<void> {
    if (this.shown.get(partKey(chat, ts)) === part) return;
    await this.api.update(chat.chatId, ts, part, [sectionBlock(part)]);
    this.remember(chat, ts, part);
  }

  private remember(chat: ChatAddress, ts: string, part: string): void {
    const key = partKey(chat, ts);
    this.shown.delete(key);
    this.shown.set(key, part);
    if (this.shown.size > REMEMBERED_PARTS) this.shown.delete(this.shown.keys().next().value!);
  }
}

/** A clean copy of an address, always on this channel. */
function addressOf(chat: ChatAddress): ChatAddress {
  return chat.subId ? { channel: SLACK, chatId: chat.chatId, subId: chat.subId } : { channel: SLACK, chatId: chat.chatId };
}

function partKey(chat: ChatAddress, ts: string): string {
  return `${chat.chatId}:${ts}`;
}
