/**
 * Sends and edits the bot's messages: markdown rendered to HTML parts of at
 * most 4096 characters, each part resent as plain text once if Telegram
 * rejects its formatting, replies kept in their forum topic. Retries of 429s
 * and transient failures happen below, in the API transformers.
 */
import { randomUUID } from 'node:crypto';
import type { Api } from 'grammy';
import type { InlineKeyboardMarkup, LinkPreviewOptions } from 'grammy/types';
import type { Logger } from '../../log.js';
import { editParts, sendParts, type PartOperations, type PartPosition } from '../multipart.js';
import type { ChatAddress, PartLedger, SentMessage } from '../types.js';
import { targetOf } from './chat.js';
import { BEFORE_REQUEST, type BeforeRequest } from './before-request.js';
import { describeError, isAbsentMessage, isMissingMessage, isNetworkFailure, isNotModified, isParseError, isRefusal, mayHaveTakenEffect, toChannelError } from './errors.js';
import type * as Parts from './parts.js';
import type { MessagePart } from './parts.js';
import { networkPause, type NetworkRetryOptions } from './retry.js';
import type { SentTrail } from './sent-trail.js';
import { UPLOAD_METHODS } from './uploads.js';

/** Answers rarely gain from a preview card under every link. */
const NO_PREVIEW: LinkPreviewOptions = { is_disabled: true };
/**
 * Messages probed, at most, when looking for a part a crash left pending:
 * room for a dozen messages a person wrote while the part waited its turn.
 */
const SEARCHED_MESSAGES = 16;
/** Ids in a row holding no message after which the search ends. */
const ABSENT_IN_A_ROW = 3;
/** Shown in a surplus part that could not be deleted. */
const EMPTIED_PART = '…';

/**
 * The markdown renderer (mdast and micromark, about 160 modules) loads with the
 * first answer, not at start: a turn's "typing…" begins loading it, so the
 * load runs while the model thinks.
 */
let renderer: Promise<typeof Parts> | undefined;
const loadRenderer = () => (renderer ??= import('./parts.js'));
const partsOf = async (markdown: string): Promise<MessagePart[]> => (await loadRenderer()).renderParts(markdown);

/** Options of one send. */
export interface SendOptions {
  /** Platform id of the message being answered (first part only). */
  replyTo?: string | undefined;
  /** The newest message of the chat the answer responds to (the channels' SendOptions.after): a search for a part starts after it. */
  after?: string | undefined;
  /** Buttons, attached to the last part. */
  replyMarkup?: InlineKeyboardMarkup | undefined;
  /** Parts sent by earlier attempts, not sent again (the channels' SendOptions.parts). */
  parts?: PartLedger | undefined;
  /** The answer's name (the channels' SendOptions.idempotencyKey): its parts are put on record by it. */
  key?: string | undefined;
  /** A successor resumes the answer: a part a crash left pending is looked for before it is sent again. */
  resumed?: boolean | undefined;
}

/** Extra sendMessage / editMessageText fields of one part, and for a post the step that puts it on record. */
interface PartExtra extends BeforeRequest {
  message_thread_id?: number;
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
  reply_markup?: InlineKeyboardMarkup;
}

/** What {@link TelegramOutbound} needs. */
export interface OutboundDeps {
  api: Api;
  log: Logger;
  /** Where every post is put on record; without it a part a crash cut short is sent again. */
  trail?: SentTrail | undefined;
  /** Retries of a post that failed on the network (the API layer leaves them to this class when there is a trail). */
  retry?: Pick<NetworkRetryOptions, 'attempts' | 'delayMs' | 'lifetime'> | undefined;
}

/** The methods whose network failures {@link TelegramOutbound} retries itself, once it has looked for the post. */
export const POSTING_METHODS: ReadonlySet<string> = new Set(['sendMessage', ...UPLOAD_METHODS]);

/** The bot's outgoing messages. */
export class TelegramOutbound {
  constructor(private readonly deps: OutboundDeps) {}

  /** Sends `markdown` as one or more messages. */
  async send(chat: ChatAddress, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    return { chat, ids: await sendParts(await partsOf(markdown), this.partsIn(chat, options), options.parts) };
  }

  /** Replaces the text of `message`; parts as {@link editParts} says. */
  async edit(message: SentMessage, markdown: string, options: SendOptions = {}): Promise<SentMessage> {
    const ops = this.partsIn(message.chat, { replyMarkup: options.replyMarkup });
    return { chat: message.chat, ids: await editParts(message.ids, await partsOf(markdown), ops) };
  }

  /** Shows "typing…" for about five seconds. */
  async typing(chat: ChatAddress): Promise<void> {
    void loadRenderer().catch(() => undefined);
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
      send: (part, at) => this.post(chatId, part, { ...threadOptions, ...extraAt(at) }, options, at.index),
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

  /**
   * Sends one part with the post on record (sent-trail.ts) before its request
   * leaves and after Telegram accepted it. A part of a resumed answer that a crash left pending is looked for first,
   * so that one Telegram accepted is not posted twice.
   */
  private async post(chatId: string, part: MessagePart, extra: PartExtra, options: SendOptions, index: number): Promise<string> {
    const trail = this.deps.trail;
    if (!trail) return this.sendPart(chatId, part, extra);
    const name = options.key ? `${options.key}#${index}` : randomUUID();
    const found = options.key && options.resumed ? await this.find(trail, chatId, name, part, extra) : undefined;
    if (found) {
      await trail.done(chatId, name, Number(found), true);
      return found;
    }
    // On record as pending right before each request leaves, after the chat's pacing: a process killed while
    // the part waited its turn leaves nothing pending, so its successor need not search for it.
    const knownId = Math.max(messageIdOf(options.replyTo), messageIdOf(options.after));
    const recorded: PartExtra = { ...extra, [BEFORE_REQUEST]: () => trail.begin(chatId, name, knownId) };
    const id = await this.sendPending(trail, chatId, name, part, recorded);
    await trail.done(chatId, name, Number(id), Boolean(options.key));
    return id;
  }

  /**
   * Sends a part that is on record as pending. After a network failure it may
   * have gone out all the same (Telegram took it, the answer was lost): it is
   * looked for before each retry.
   */
  private async sendPending(trail: SentTrail, chatId: string, name: string, part: MessagePart, extra: PartExtra): Promise<string> {
    const retry = this.deps.retry;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.sendPart(chatId, part, extra);
      } catch (error) {
        // Refused: the part did not go out. After a network failure or a server error it may have: it stays pending.
        if (isRefusal(error)) await trail.refused(chatId, name);
        if (!retry || !isNetworkFailure(error) || attempt >= retry.attempts || retry.lifetime.aborted) throw error;
        await networkPause(retry, attempt, error);
        const found = mayHaveTakenEffect(error) ? await this.find(trail, chatId, name, part, extra) : undefined;
        if (found) return found;
      }
    }
  }

  /**
   * Finds a part on record by its name (the process died after recording it,
   * before the answer's own ledger did), or else looks for a pending part
   * among the chat's messages after the ones known when it was begun: editing
   * a message to the part's own text is refused as "not modified" only by the
   * bot's message that shows exactly that text. Another person's message
   * cannot be edited, and the bot's recorded messages are skipped; the search
   * plan is given only when no other post of the chat is pending, so no
   * unknown message of the bot can be hit. A few ids in a row with no message
   * end the search (one alone may be a deleted message): the part did not go
   * out.
   */
  private async find(trail: SentTrail, chatId: string, name: string, part: MessagePart, extra: PartExtra): Promise<string | undefined> {
    const plan = await trail.lookup(chatId, name);
    if (!plan) return undefined;
    if (plan.kind === 'sent') {
      this.deps.log.info('telegram: a part of a resumed answer is on record as sent; not sending it again');
      return String(plan.id);
    }
    const { reply_markup } = extra;
    const options = { link_preview_options: NO_PREVIEW, ...(reply_markup ? { reply_markup } : {}) };
    let probed = 0;
    let absent = 0;
    for (let id = plan.after + 1; probed < SEARCHED_MESSAGES && absent < ABSENT_IN_A_ROW; id += 1) {
      if (plan.known.has(id)) continue;
      probed += 1;
      const outcome = await this.probe(chatId, id, part, options);
      if (outcome === 'shown') {
        this.deps.log.info({ probed }, 'telegram: a part that may have gone out was found; not sending it again');
        return String(id);
      }
      if (outcome === 'stop') break;
      absent = outcome === 'absent' ? absent + 1 : 0;
    }
    this.deps.log.info({ probed }, 'telegram: a part that may have gone out was not found; sending it');
    return undefined;
  }

  /** Whether message `id` shows `part` (as HTML, or as the plain text it falls back to), is another's, is absent, or cannot be told. */
  private async probe(chatId: string, id: number, part: MessagePart, options: Record<string, unknown>): Promise<'shown' | 'other' | 'absent' | 'stop'> {
    for (const [text, parseMode] of [[part.html, { parse_mode: 'HTML' }], [part.markdown, {}]] as const) {
      try {
        await this.deps.api.editMessageText(chatId, id, text, { ...options, ...parseMode });
        // It showed something else: a message of the bot the record did not name. Stop before another.
        this.deps.log.error({ messageId: id }, 'telegram: a message of the bot that was not on record was edited while looking for a part');
        return 'stop';
      } catch (error) {
        if (isNotModified(error)) return 'shown';
        if (isAbsentMessage(error)) return 'absent';
        if (isMissingMessage(error)) return 'other';
        if (!isParseError(error)) return 'stop';
      }
    }
    return 'stop';
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
      if (isMissingMessage(error)) return this.post(chatId, part, { ...threadOptions, ...extra }, {}, 0);
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

/** A Telegram message id given as text; 0 when there is none. */
function messageIdOf(id: string | undefined): number {
  const value = Number(id);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
