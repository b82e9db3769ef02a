/**
 * Sending, editing and deleting the bot's messages. One logical message may be
 * several Discord messages (parts); edits change the parts that differ, send
 * extra ones and delete the surplus.
 */
import type {
  APIActionRowComponent,
  APIComponentInMessageActionRow,
  Client,
  MessageCreateOptions,
  SendableChannels,
} from 'discord.js';
import { ChannelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ChatAddress, SentMessage } from '../types.js';
import { toChannelError } from './failure.js';
import { EMPTY_TEXT } from './render.js';

/** Rows of buttons under a message. */
export type ButtonRows = APIActionRowComponent<APIComponentInMessageActionRow>[];

/** Options of a multi-part send or edit. */
export interface PartOptions {
  /** The message the first part replies to. */
  replyTo?: string;
  /** Buttons under the last part; `[]` removes them. */
  lastComponents?: ButtonRows;
}

/** Remembered part contents, so that streaming edits skip parts that did not change. */
const REMEMBERED_PARTS = 1000;

/** Message I/O over the discord.js REST client. */
export class DiscordOutbound {
  private readonly contents = new Map<string, string>();

  constructor(
    private readonly client: Client,
    private readonly log: Logger,
  ) {}

  /** Sends the parts in order and returns their ids. */
  async send(chat: ChatAddress, parts: readonly string[], options: PartOptions = {}): Promise<SentMessage> {
    const channel = await this.channelOf(chat);
    const ids: string[] = [];
    for (const [index, content] of parts.entries()) {
      const isLast = index === parts.length - 1;
      const create: MessageCreateOptions = { content, allowedMentions: { parse: [], repliedUser: false } };
      if (index === 0 && options.replyTo) create.reply = { messageReference: options.replyTo, failIfNotExists: false };
      if (isLast && options.lastComponents) create.components = options.lastComponents;
      ids.push(await this.create(channel, chat, create));
    }
    return { chat: addressOf(chat), ids };
  }

  /** Replaces the text of a sent message with `parts`. */
  async edit(message: SentMessage, parts: readonly string[], options: PartOptions = {}): Promise<SentMessage> {
    const channel = await this.channelOf(message.chat);
    const kept = message.ids.slice(0, parts.length);
    for (const [index, id] of kept.entries()) {
      const components = index === parts.length - 1 ? options.lastComponents : undefined;
      await this.update(channel, id, parts[index]!, components);
    }
    const extra = parts.slice(kept.length);
    const added = extra.length ? (await this.send(message.chat, extra, { lastComponents: options.lastComponents })).ids : [];
    for (const id of message.ids.slice(parts.length)) await this.remove(channel, id);
    return { chat: addressOf(message.chat), ids: [...kept, ...added] };
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

  private async create(channel: SendableChannels, chat: ChatAddress, options: MessageCreateOptions): Promise<string> {
    try {
      const sent = await channel.send(options);
      this.remember(sent.id, options.content ?? '');
      return sent.id;
    } catch (error) {
      throw toChannelError(error, `send to ${chat.chatId}`);
    }
  }

  private async update(channel: SendableChannels, id: string, content: string, components?: ButtonRows): Promise<void> {
    if (!components && this.contents.get(id) === content) return;
    try {
      await channel.messages.edit(id, { content, ...(components ? { components } : {}), allowedMentions: { parse: [] } });
      this.remember(id, content);
    } catch (error) {
      throw toChannelError(error, `edit ${id}`);
    }
  }

  /** Deletes a surplus part; when that is refused, blanks it instead. */
  private async remove(channel: SendableChannels, id: string): Promise<void> {
    this.contents.delete(id);
    try {
      await channel.messages.delete(id);
    } catch (error) {
      this.log.warn({ err: error, messageId: id }, 'could not delete a surplus part; blanking it');
      await this.update(channel, id, EMPTY_TEXT, []);
    }
  }

  private async channelOf(chat: ChatAddress): Promise<SendableChannels> {
    let channel;
    try {
      channel = await this.client.channels.fetch(chat.chatId);
    } catch (error) {
      throw toChannelError(error, `fetch channel ${chat.chatId}`);
    }
    if (!channel?.isSendable()) throw new ChannelError('discord', `channel ${chat.chatId} is not a text channel`);
    return channel;
  }

  private remember(id: string, content: string): void {
    this.contents.set(id, content);
    if (this.contents.size > REMEMBERED_PARTS) this.contents.delete(this.contents.keys().next().value as string);
  }
}

/** Discord has no sub-conversations: threads are channels of their own. */
function addressOf(chat: ChatAddress): ChatAddress {
  return { channel: 'discord', chatId: chat.chatId };
}
