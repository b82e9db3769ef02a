/**
 * Sending, editing and deleting the bot's messages. One logical message may be
 * several Discord messages (parts), sent and edited by ../multipart.ts with the
 * Discord operations given here.
 */
import { createHash } from 'node:crypto';
import type {
  APIActionRowComponent,
  APIComponentInMessageActionRow,
  Client,
  MessageCreateOptions,
  SendableChannels,
} from 'discord.js';
import { ChannelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { editParts, sendParts, ShownParts, type PartOperations, type PartPosition } from '../multipart.js';
import type { ChatAddress, FileLimits, OutboundFile, PartLedger, SentMessage } from '../types.js';
import { toChannelError } from './errors.js';
import { EMPTY_TEXT } from './render.js';

/**
 * What a bot may upload in one message: 10 MB, Discord's limit for servers
 * without boosts and for DMs (boosted servers take more, but a bot cannot tell
 * the limit of every channel before it sends, so the smallest one holds).
 */
export const DISCORD_FILE_LIMITS: FileLimits = { photoBytes: 10 * 1024 * 1024, documentBytes: 10 * 1024 * 1024 };

/** Rows of buttons under a message. */
export type ButtonRows = APIActionRowComponent<APIComponentInMessageActionRow>[];

/** Options of a multi-part send or edit. */
export interface PartOptions {
  /** The message the first part replies to. */
  replyTo?: string;
  /** Buttons under the last part; `[]` removes them. */
  lastComponents?: ButtonRows;
  /** Names the message: each part's nonce derives from it, so Discord drops a repeated send. */
  idempotencyKey?: string;
  /** Parts sent by earlier attempts, not sent again (the channels' SendOptions.parts). */
  parts?: PartLedger;
}

/** Message I/O over the discord.js REST client. */
export class DiscordOutbound {
  /** What recent parts show, so that streaming edits skip parts that did not change. */
  private readonly shown = new ShownParts();

  /**
   * @param restOnly the client is not on the gateway (an instance of a cluster):
   *   its cache holds no guilds, so a guild's channel is used without its guild
   */
  constructor(
    private readonly client: Client,
    private readonly log: Logger,
    private readonly restOnly = false,
  ) {}

  /** Sends the parts in order and returns their ids. */
  async send(chat: ChatAddress, parts: readonly string[], options: PartOptions = {}): Promise<SentMessage> {
    const ops = this.partsIn(chat, await this.channelOf(chat), options);
    return { chat: addressOf(chat), ids: await sendParts(parts, ops, options.parts) };
  }

  /** Replaces the text of a sent message with `parts`, as {@link editParts} says. */
  async edit(message: SentMessage, parts: readonly string[], options: PartOptions = {}): Promise<SentMessage> {
    const ops = this.partsIn(message.chat, await this.channelOf(message.chat), { lastComponents: options.lastComponents });
    return { chat: addressOf(message.chat), ids: await editParts(message.ids, parts, ops) };
  }

  /**
   * Sends a file as a message with it attached (multipart `files[0]` and
   * `payload_json`): Discord shows an image inline, any other file as a
   * download. Its caption is the message text; `idempotencyKey` gives the
   * nonce, so that Discord drops a repeated send of the same file.
   */
  async sendFile(chat: ChatAddress, file: OutboundFile, options: Pick<PartOptions, 'replyTo' | 'idempotencyKey'> = {}): Promise<SentMessage> {
    const channel = await this.channelOf(chat);
    const create: MessageCreateOptions = {
      files: [{ attachment: Buffer.from(file.bytes), name: file.name }],
      allowedMentions: { parse: [], repliedUser: false },
    };
    if (file.caption) create.content = file.caption;
    if (options.replyTo) create.reply = { messageReference: options.replyTo, failIfNotExists: false };
    if (options.idempotencyKey) Object.assign(create, { nonce: nonceOf(options.idempotencyKey, 0), enforceNonce: true });
    return { chat: addressOf(chat), ids: [await this.create(channel, chat, create)] };
  }

  /** Shows "pincer is typing…" for about ten seconds. */
  async typing(chat: ChatAddress): Promise<void> {
    const channel = await this.channelOf(chat);
    try {
      await channel.sendTyping();
    } catch (error) {
      throw toChannelError(error, `typing in ${chat.chatId}`);
    }
  }

  /** The operations on the parts of one reply in `channel`; buttons go under the last part. */
  private partsIn(chat: ChatAddress, channel: SendableChannels, options: PartOptions): PartOperations<string> {
    const componentsAt = (at: PartPosition) => (at.last ? options.lastComponents : undefined);
    return {
      send: (content, at) => {
        const create: MessageCreateOptions = { content, allowedMentions: { parse: [], repliedUser: false } };
        if (at.index === 0 && options.replyTo) create.reply = { messageReference: options.replyTo, failIfNotExists: false };
        if (options.idempotencyKey) Object.assign(create, { nonce: nonceOf(options.idempotencyKey, at.index), enforceNonce: true });
        const components = componentsAt(at);
        if (components) create.components = components;
        return this.create(channel, chat, create);
      },
      edit: async (id, content, at) => {
        await this.update(channel, id, content, componentsAt(at));
        return id;
      },
      delete: async (id) => {
        await channel.messages.delete(id);
      },
      blank: (id) => this.update(channel, id, EMPTY_TEXT, []),
      cache: { shown: this.shown, key: (id) => id, text: (content) => content, alwaysEdit: (at) => componentsAt(at) !== undefined },
      onRefused: (id, step, error) => {
        const message = step === 'delete' ? 'could not delete a surplus part; blanking it' : 'could not blank a surplus part; leaving it';
        this.log.warn({ err: error, messageId: id }, message);
      },
    };
  }

  private async create(channel: SendableChannels, chat: ChatAddress, options: MessageCreateOptions): Promise<string> {
    try {
      return (await channel.send(options)).id;
    } catch (error) {
      throw toChannelError(error, `send to ${chat.chatId}`);
    }
  }

  private async update(channel: SendableChannels, id: string, content: string, components?: ButtonRows): Promise<void> {
    try {
      await channel.messages.edit(id, { content, ...(components ? { components } : {}), allowedMentions: { parse: [] } });
    } catch (error) {
      throw toChannelError(error, `edit ${id}`);
    }
  }

  private async channelOf(chat: ChatAddress): Promise<SendableChannels> {
    let channel;
    try {
      channel = await this.client.channels.fetch(chat.chatId, { allowUnknownGuild: this.restOnly });
    } catch (error) {
      throw toChannelError(error, `fetch channel ${chat.chatId}`);
    }
    if (!channel?.isSendable()) throw new ChannelError('discord', `channel ${chat.chatId} is not a text channel`);
    return channel;
  }
}

/** Discord's nonce for part `index` of the message named `key`: at most 25 characters. */
export function nonceOf(key: string, index: number): string {
  return createHash('sha256').update(`${key}\u0000${index}`).digest('base64url').slice(0, 25);
}

/** Discord has no sub-conversations: threads are channels of their own. */
function addressOf(chat: ChatAddress): ChatAddress {
  return { channel: 'discord', chatId: chat.chatId };
}
