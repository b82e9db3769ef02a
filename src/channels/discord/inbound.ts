/**
 * Turns a gateway message into an InboundMessage, or nothing when it must be
 * ignored (own messages, other bots unless configured, system messages,
 * senders or places outside the allowlists).
 */
import { cleanContent, type Message } from 'discord.js';
import type { Allowlists } from '../access.js';
import { attachmentKindOf } from '../attachment-kind.js';
import type { AttachmentMeta, ChatInfo, InboundMessage } from '../types.js';
import { isAllowed } from './access.js';
import { chatInfoOf } from './chat.js';
import type { DiscordConfig } from './client.js';
import { botIdentityIn, mentionsBot, repliesToBot, stripBotMentions } from './mentions.js';

/** The message as the agent sees it, or undefined when it is ignored. */
export function toInboundMessage(message: Message, botUserId: string, config: DiscordConfig, lists: Allowlists): InboundMessage | undefined {
  if (!isFromAcceptedAuthor(message, botUserId, config)) return undefined;
  if (!isAllowed(lists, originOf(message))) return undefined;
  const bot = botIdentityIn(message.guild, botUserId);
  const isDm = !message.guildId;
  return {
    type: 'message',
    chat: chatOfMessage(message),
    sender: { id: message.author.id, name: senderName(message), isBot: message.author.bot },
    receivedAt: Date.now(),
    messageId: message.id,
    // Mentions of others become readable names; the bot's own is dropped.
    text: cleanContent(stripBotMentions(message.content, bot), message.channel),
    mentionsBot: isDm || mentionsBot(message, bot),
    replyToBot: repliesToBot(message, bot),
    attachments: attachmentsOf(message),
  };
}

/** The chat a message belongs to: its channel or thread. */
export function chatOfMessage(message: Message): ChatInfo {
  const channel = message.channel;
  return chatInfoOf({
    channelId: message.channelId,
    guildId: message.guildId,
    channelName: 'name' in channel ? channel.name : undefined,
    guildName: message.guild?.name,
  });
}

function isFromAcceptedAuthor(message: Message, botUserId: string, config: DiscordConfig): boolean {
  if (message.author.id === botUserId) return false;
  if (message.system) return false;
  return !message.author.bot || config.respondToBots;
}

function originOf(message: Message) {
  const channel = message.channel;
  return {
    userId: message.author.id,
    guildId: message.guildId,
    channelId: message.channelId,
    parentId: channel.isThread() ? channel.parentId : null,
  };
}

function senderName(message: Message): string {
  return message.member?.displayName ?? message.author.displayName;
}

/** The files of a message: their CDN URLs, fetched later. */
function attachmentsOf(message: Message): AttachmentMeta[] {
  return message.attachments.map((attachment) => ({
    kind: attachmentKindOf(attachment.contentType ?? undefined, attachment.name),
    name: attachment.name,
    ...(attachment.contentType ? { mimeType: attachment.contentType } : {}),
    sizeBytes: attachment.size,
    fileId: attachment.id,
    url: attachment.url,
  }));
}
