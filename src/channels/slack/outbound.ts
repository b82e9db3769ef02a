/**
 * Where a reply leaves for Slack: each part of a rendered answer is its own
 * message (mrkdwn `text` as the fallback plus one section block), posted in the
 * conversation's thread when it has one. Sends and edits go through
 * ../multipart.ts with the Slack operations given here.
 */
import { approvalPromptText, approvalResolvedText } from '../approval-text.js';
import { editParts, sendParts, ShownParts, type PartOperations } from '../multipart.js';
import type { Logger } from '../../log.js';
import type { ApprovalOutcome, ApprovalPrompt, ChatAddress, FileLimits, OutboundFile, SendOptions, SentMessage } from '../types.js';
import { approvalActionsBlock, BLANK, sectionBlock } from './blocks.js';
import { SLACK } from './chat.js';
import { mrkdwnParts } from './format.js';
import { markdownToMrkdwn } from './render.js';
import { toChannelError } from './errors.js';
import type { SlackWebApi } from './web-api.js';

/** What a bot may upload: 1 GB, the files API's limit (pincer's own `attachments.maxBytes` is usually the lower bound). */
export const SLACK_FILE_LIMITS: FileLimits = { photoBytes: 1024 * 1024 * 1024, documentBytes: 1024 * 1024 * 1024 };

/** Posts and edits the bot's messages. */
export class SlackOutbound {
  /** Last text of recent parts, so that an edit skips the parts it does not change. */
  private readonly shown = new ShownParts();

  constructor(
    private readonly api: SlackWebApi,
    private readonly log: Logger,
  ) {}

  /**
   * Posts `markdown` as one or more messages, in order. A named answer's parts
   * carry its name as metadata; when it is resumed, the parts found in the
   * conversation already are not posted again.
   */
  async send(chat: ChatAddress, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    const address = addressOf(chat);
    const key = options.idempotencyKey;
    const ops = this.partsIn(address, key);
    if (key && options.resumed) {
      const posted = await this.postedParts(address, key);
      const post = ops.send;
      ops.send = (part, at) => {
        const ts = posted.get(at.index);
        return ts ? Promise.resolve(ts) : post(part, at);
      };
    }
    return { chat: address, ids: await sendParts(mrkdwnParts(markdown), ops, options.parts) };
  }

  /** Replaces the text of a sent message, as {@link editParts} says. */
  async edit(message: SentMessage, markdown: string): Promise<SentMessage> {
    const address = addressOf(message.chat);
    return { chat: address, ids: await editParts(message.ids, mrkdwnParts(markdown), this.partsIn(address)) };
  }

  /**
   * Shares a file into the conversation (its thread kept) with its caption as
   * the comment; Slack previews an image inline. The id is the file's.
   */
  async sendFile(chat: ChatAddress, file: OutboundFile): Promise<SentMessage> {
    const address = addressOf(chat);
    const id = await this.api.uploadFile({
      channel: address.chatId,
      name: file.name,
      bytes: file.bytes,
      ...(address.subId ? { threadTs: address.subId } : {}),
      ...(file.caption ? { comment: markdownToMrkdwn(file.caption) } : {}),
    });
    return { chat: address, ids: [id] };
  }

  /** Posts an approval prompt: its text and the Approve / Always allow / Deny buttons. */
  async sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    const address = addressOf(chat);
    const text = markdownToMrkdwn(approvalPromptText(prompt));
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
    const text = markdownToMrkdwn(approvalResolvedText(prompt, outcome));
    await this.api.update(message.chat.chatId, ts, text, [sectionBlock(text)]);
  }

  /** The parts of the answer named `key` already posted; none when the history cannot be read (all are posted then). */
  private async postedParts(chat: ChatAddress, key: string): Promise<Map<number, string>> {
    try {
      const posted = await this.api.answerParts(chat.chatId, chat.subId, key);
      if (posted.size) this.log.info({ chat: chat.chatId, parts: posted.size }, 'slack: parts of a resumed answer were posted already; not posting them again');
      return posted;
    } catch (error) {
      this.log.warn({ err: error, chat: chat.chatId }, 'slack: could not look for the parts of a resumed answer; posting it whole');
      return new Map();
    }
  }

  /** The operations on the parts of one reply in `chat`; a `ts` is unique only within its conversation. */
  private partsIn(chat: ChatAddress, key?: string): PartOperations<string> {
    const update = (ts: string, part: string) => this.api.update(chat.chatId, ts, part, [sectionBlock(part)]);
    return {
      send: (part, at) =>
        this.api.postMessage({ channel: chat.chatId, text: part, blocks: [sectionBlock(part)], threadTs: chat.subId, ...(key ? { answer: { key, part: at.index } } : {}) }),
      edit: async (ts, part) => {
        await update(ts, part);
        return ts;
      },
      delete: async (ts) => {
        try {
          await this.api.client.chat.delete({ channel: chat.chatId, ts });
        } catch (error) {
          throw toChannelError(error, 'chat.delete');
        }
      },
      blank: (ts) => update(ts, BLANK),
      cache: { shown: this.shown, key: (ts) => `${chat.chatId}:${ts}`, text: (part) => part },
    };
  }
}

/** A clean copy of an address, always on this channel. */
function addressOf(chat: ChatAddress): ChatAddress {
  return chat.subId ? { channel: SLACK, chatId: chat.chatId, subId: chat.subId } : { channel: SLACK, chatId: chat.chatId };
}
