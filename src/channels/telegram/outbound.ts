/**
 * Sends and edits the bot's messages: markdown rendered to HTML parts of at
 * most 4096 characters, each part resent as plain text once if Telegram
 * rejects its formatting, replies kept in their forum topic. Retries of 429s
 * and transient failures happen below, in the API transformers.
 */
import type { Api } from 'grammy';
import type { InlineKeyboardMarkup, LinkPreviewOptions } from 'grammy/types';
import type { Logger } from '../../log.js';
import type { ChatAddress, SentMessage } from '../types.js';
import { targetOf } from './chat.js';
import { describeError, isMissingMessage, isNotModified, isParseError, toChannelError } from './errors.js';
import { renderParts, type MessagePart } from './parts.js';

/** Answers rarely gain from a preview card under every link. */
const NO_PREVIEW: LinkPreviewOptions = { is_disabled: true };
/** Shown in a surplus part that could not be deleted. */
const EMPTIED_PART = '…';

/** Options of one send. */
export interface SendOptions {
  /** Platform id of the message being answered (first part only). */
  replyTo?: string | undefined;
  /** Buttons, attached to the last part. */
  replyMarkup?: InlineKeyboardMarkup | undefined;
}

/** Extra sendMessage / editMessageText fields of one part. */
interface PartExtra {
  message_thread_id?: number;
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
  reply_markup?: InlineKeyboardMarkup;
}

/** What {@link Outbound} needs. */
export interface OutboundDeps {
  api: Api;
  log: Logger;
  token: string;
}

/** The bot's outgoing messages. */
export class Outbound {
  constructor(private readonly deps: OutboundDeps) {}

  /** Sends `markdown` as one or more messages. */
  async send(chat: ChatAddress, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    const parts = renderParts(markdown);
    const { chatId, threadOptions } = targetOf(chat);
    const ids: string[] = [];
    for (const [index, part] of parts.entries()) {
      const extra: PartExtra = { ...threadOptions };
      if (index === 0 && options.replyTo) {
        extra.reply_parameters = { message_id: Number(options.replyTo), allow_sending_without_reply: true };
      }
      if (index === parts.length - 1 && options.replyMarkup) extra.reply_markup = options.replyMarkup;
      ids.push(await this.sendPart(chatId, part, extra));
    }
    return { chat, ids };
  }

  /**
   * Replaces the text of `message`: parts edited in place, extra parts sent,
   * surplus parts deleted (or emptied when Telegram refuses the deletion).
   */
  async edit(message: SentMessage, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    const parts = renderParts(markdown);
    const { chatId, threadOptions } = targetOf(message.chat);
    const ids: string[] = [];
    for (const [index, part] of parts.entries()) {
      const extra: PartExtra = index === parts.length - 1 && options.replyMarkup ? { reply_markup: options.replyMarkup } : {};
      const existing = message.ids[index];
      ids.push(
        existing
          ? await this.editPart(chatId, existing, part, extra, threadOptions)
          : await this.sendPart(chatId, part, { ...threadOptions, ...extra }),
      );
    }
    for (const surplus of message.ids.slice(parts.length)) await this.removePart(chatId, surplus);
    return { chat: message.chat, ids };
  }

  /** Shows "typing…" for about five seconds. */
  async typing(chat: ChatAddress): Promise<void> {
    const { chatId, threadOptions } = targetOf(chat);
    try {
      await this.deps.api.sendChatAction(chatId, 'typing', threadOptions);
    } catch (error) {
      throw toChannelError(error, this.deps.token, 'sendChatAction');
    }
  }

  private async sendPart(chatId: string, part: MessagePart, extra: PartExtra): Promise<string> {
    const options = { ...extra, link_preview_options: NO_PREVIEW };
    try {
      return String((await this.deps.api.sendMessage(chatId, part.html, { ...options, parse_mode: 'HTML' })).message_id);
    } catch (error) {
      if (!isParseError(error)) throw toChannelError(error, this.deps.token, 'sendMessage');
      this.warnPlain(error);
    }
    try {
      return String((await this.deps.api.sendMessage(chatId, part.markdown, options)).message_id);
    } catch (error) {
      throw toChannelError(error, this.deps.token, 'sendMessage');
    }
  }

  /** Edits one part; returns its id, or the id of a new message when the old one is gone. */
  private async editPart(
    chatId: string,
    id: string,
    part: MessagePart,
    extra: PartExtra,
    threadOptions: { message_thread_id?: number },
  ): Promise<string> {
    const options = { ...extra, link_preview_options: NO_PREVIEW };
    try {
      await this.editText(chatId, id, part.html, { ...options, parse_mode: 'HTML' });
      return id;
    } catch (error) {
      if (isMissingMessage(error)) return this.sendPart(chatId, part, { ...threadOptions, ...extra });
      if (!isParseError(error)) throw toChannelError(error, this.deps.token, 'editMessageText');
      this.warnPlain(error);
    }
    try {
      await this.editText(chatId, id, part.markdown, options);
      return id;
    } catch (error) {
      throw toChannelError(error, this.deps.token, 'editMessageText');
    }
  }

  /** editMessageText where "message is not modified" counts as done. */
  private async editText(chatId: string, id: string, text: string, options: Record<string, unknown>): Promise<void> {
    try {
      await this.deps.api.editMessageText(chatId, Number(id), text, options);
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
  }

  private async removePart(chatId: string, id: string): Promise<void> {
    try {
      await this.deps.api.deleteMessage(chatId, Number(id));
      return;
    } catch (error) {
      this.deps.log.debug({ error: describeError(error, this.deps.token) }, 'telegram: surplus part not deleted, emptying it');
    }
    try {
      await this.editText(chatId, id, EMPTIED_PART, {});
    } catch (error) {
      this.deps.log.warn({ error: describeError(error, this.deps.token) }, 'telegram: surplus part left as it was');
    }
  }

  private warnPlain(error: unknown): void {
    this.deps.log.warn({ error: describeError(error, this.deps.token) }, 'telegram: formatting rejected, sending the part as plain text');
  }
}
