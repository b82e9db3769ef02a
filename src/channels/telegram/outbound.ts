/**
 * Sends and edits the bot's messages: markdown rendered to HTML parts of at
 * most 4096 characters, each part resent as plain text once if Telegram
 * rejects its formatting, replies kept in their forum topic. Retries of 429s
 * and transient failures happen below, in the API transformers.
 */
import type { Api } from 'grammy';
import type { InlineKeyboardMarkup, LinkPreviewOptions } from 'grammy/types';
import type { Logger } from '../../log.js';
import { editParts, sendParts, type PartOperations, type PartPosition } from '../multipart.js';
import type { ChatAddress, PartLedger, SentMessage } from '../types.js';
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
  /** Parts sent by earlier attempts, not sent again (the channels' SendOptions.parts). */
  parts?: PartLedger | undefined;
}

/** Extra sendMessage / editMessageText fields of one part. */
interface PartExtra {
  message_thread_id?: number;
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
  reply_markup?: InlineKeyboardMarkup;
}

/** What {@link TelegramOutbound} needs. */
export interface OutboundDeps {
  api: Api;
  log: Logger;
}

/** The bot's outgoing messages. */
export class TelegramOutbound {
  constructor(private readonly deps: OutboundDeps) {}

  /** Sends `markdown` as one or more messages. */
  async send(chat: ChatAddress, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    return { chat, ids: await sendParts(renderParts(markdown), this.partsIn(chat, options), options.parts) };
  }

  /** Replaces the text of `message`; parts as {@link editParts} says. */
  async edit(message: SentMessage, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    const ops = this.partsIn(message.chat, { replyMarkup: options.replyMarkup });
    return { chat: message.chat, ids: await editParts(message.ids, renderParts(markdown), ops) };
  }

  /** Shows "typing…" for about five seconds. */
  async typing(chat: ChatAddress): Promise<void> {
    const { chatId, threadOptions } = targetOf(chat);
    try {
      await this.deps.api.sendChatAction(chatId, 'typing', threadOptions);
    } catch (error) {
      throw toChannelError(error, 'sendChatAction');
    }
  }

  /**
   * The operations on the parts of one reply in `chat`. No cache: Telegram
   * answers "message is not modified" itself, which {@link editText} ignores.
   */
  private partsIn(chat: ChatAddress, options: SendOptions): PartOperations<MessagePart> {
    const { chatId, threadOptions } = targetOf(chat);
    const extraAt = ({ index, last }: PartPosition): PartExtra => ({
      ...(index === 0 && options.replyTo
        ? { reply_parameters: { message_id: Number(options.replyTo), allow_sending_without_reply: true } }
        : {}),
      ...(last && options.replyMarkup ? { reply_markup: options.replyMarkup } : {}),
    });
    return {
      send: (part, at) => this.sendPart(chatId, part, { ...threadOptions, ...extraAt(at) }),
      edit: (id, part, at) => this.editPart(chatId, id, part, extraAt(at), threadOptions),
      delete: async (id) => {
        await this.deps.api.deleteMessage(chatId, Number(id));
      },
      blank: (id) => this.editText(chatId, id, EMPTIED_PART, {}),
      onRefused: (_id, step, error) => {
        const description = describeError(error);
        if (step === 'delete') this.deps.log.debug({ error: description }, 'telegram: surplus part not deleted, emptying it');
        else this.deps.log.warn({ error: description }, 'telegram: surplus part left as it was');
      },
    };
  }

  private async sendPart(chatId: string, part: MessagePart, extra: PartExtra): Promise<string> {
    const options = { ...extra, link_preview_options: NO_PREVIEW };
    try {
      return String((await this.deps.api.sendMessage(chatId, part.html, { ...options, parse_mode: 'HTML' })).message_id);
    } catch (error) {
      if (!isParseError(error)) throw toChannelError(error, 'sendMessage');
      this.warnPlain(error);
    }
    try {
      return String((await this.deps.api.sendMessage(chatId, part.markdown, options)).message_id);
    } catch (error) {
      throw toChannelError(error, 'sendMessage');
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
      if (!isParseError(error)) throw toChannelError(error, 'editMessageText');
      this.warnPlain(error);
    }
    try {
      await this.editText(chatId, id, part.markdown, options);
      return id;
    } catch (error) {
      throw toChannelError(error, 'editMessageText');
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

  private warnPlain(error: unknown): void {
    this.deps.log.warn({ error: describeError(error) }, 'telegram: formatting rejected, sending the part as plain text');
  }
}
