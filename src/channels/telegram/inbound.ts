/**
 * Turns a Telegram message into an inbound event: a command when it starts
 * with a bot_command entity meant for this bot, otherwise a text message with
 * the mention and reply-to-bot flags the agent needs to decide whether to
 * answer in a group. Messages of bots (this one included) are dropped.
 */
import type { Message, MessageEntity } from 'grammy/types';
import { attachmentKindOf } from '../attachment-kind.js';
import type { AttachmentKind, AttachmentMeta, ChatInfo, InboundCommand, InboundMessage } from '../types.js';
import { chatInfoOf, senderOf, topicOf } from './chat.js';

/** Who this bot is, from getMe. */
export interface BotIdentity {
  id: number;
  username: string;
}

/** What decides how a message is read, besides the message. */
export interface InboundContext {
  bot: BotIdentity;
  /** Registered command names; in groups a bare `/cmd` outside this set is ordinary text (it may be another bot's). */
  knownCommands: ReadonlySet<string>;
  now: number;
}

/** A command at the start of a message. */
interface ParsedCommand {
  name: string;
  args: string;
  /** Written as `/cmd@thisbot`. */
  addressed: boolean;
}

/** The event for `message`, or undefined when pincer ignores it. */
export function toInboundEvent(message: Message, context: InboundContext): InboundMessage | InboundCommand | undefined {
  const from = message.from;
  if (!from || from.is_bot) return undefined;
  const chat = chatInfoOf(message.chat, topicOf(message));
  if (!chat) return undefined;
  const text = message.text ?? message.caption ?? '';
  const entities = message.entities ?? message.caption_entities ?? [];
  const attachments = attachmentsOf(message);
  if (!text && attachments.length === 0) return undefined;
  const base = { chat, sender: senderOf(from), receivedAt: context.now, messageId: String(message.message_id) };

  const command = message.text ? parseCommand(text, entities, context.bot) : undefined;
  if (command === 'foreign') return undefined;
  if (command && isOurCommand(command, chat, context)) {
    return { type: 'command', ...base, name: command.name, args: command.args };
  }
  const mentioned = mentionsOf(text, entities, context.bot);
  const replyToBot = isReplyToBot(message, context.bot);
  return {
    type: 'message',
    ...base,
    text: mentioned.length ? withoutRanges(text, mentioned) : text,
    mentionsBot: chat.kind === 'dm' || mentioned.length > 0 || hasTextMention(entities, context.bot) || replyToBot,
    replyToBot,
    attachments,
  };
}

function isOurCommand(command: ParsedCommand, chat: ChatInfo, context: InboundContext): boolean {
  return chat.kind === 'dm' || command.addressed || context.knownCommands.has(command.name);
}

/**
 * The command of a message whose first entity is a bot_command at offset 0;
 * `'foreign'` when it names another bot (`/cmd@otherbot`).
 */
function parseCommand(text: string, entities: MessageEntity[], bot: BotIdentity): ParsedCommand | 'foreign' | undefined {
  const entity = entities.find((candidate) => candidate.type === 'bot_command' && candidate.offset === 0);
  if (!entity) return undefined;
  const [name = '', target] = text.slice(1, entity.length).split('@');
  if (target !== undefined && target.toLowerCase() !== bot.username.toLowerCase()) return 'foreign';
  return { name: name.toLowerCase(), args: text.slice(entity.length).trim(), addressed: target !== undefined };
}

/** The ranges of `@thisbot` mention entities (offsets in UTF-16 units, as JavaScript strings count). */
function mentionsOf(text: string, entities: MessageEntity[], bot: BotIdentity): MessageEntity[] {
  const handle = `@${bot.username.toLowerCase()}`;
  if (!entities.some((entity) => entity.type === 'mention')) return handleRanges(text, handle);
  return entities.filter(
    (entity) => entity.type === 'mention' && text.slice(entity.offset, entity.offset + entity.length).toLowerCase() === handle,
  );
}

/**
 * `@thisbot` found in the text itself, for a message that came without mention
 * entities (some Bot API proxies and bridges drop them).
 */
function handleRanges(text: string, handle: string): MessageEntity[] {
  const ranges: MessageEntity[] = [];
  const lower = text.toLowerCase();
  for (let at = lower.indexOf(handle); at !== -1; at = lower.indexOf(handle, at + handle.length)) {
    const next = lower[at + handle.length];
    if (next === undefined || !/\w/.test(next)) ranges.push({ type: 'mention', offset: at, length: handle.length });
  }
  return ranges;
}

function hasTextMention(entities: MessageEntity[], bot: BotIdentity): boolean {
  return entities.some((entity) => entity.type === 'text_mention' && entity.user.id === bot.id);
}

/**
 * A reply to one of the bot's messages. In a forum topic every message
 * "replies" to the topic's first message, which does not count.
 */
function isReplyToBot(message: Message, bot: BotIdentity): boolean {
  const reply = message.reply_to_message;
  if (!reply || reply.forum_topic_created) return false;
  if (message.is_topic_message && reply.message_id === message.message_thread_id) return false;
  return reply.from?.id === bot.id;
}

/** `text` with the given entity ranges removed and the spacing tidied. */
function withoutRanges(text: string, ranges: MessageEntity[]): string {
  let result = text;
  for (const range of [...ranges].sort((a, b) => b.offset - a.offset)) {
    result = result.slice(0, range.offset) + result.slice(range.offset + range.length);
  }
  return result.replace(/[ \t]{2,}/g, ' ').replace(/^[\s,:]+/, '').trim();
}

/**
 * The files on a message, with their `file_id`s to download them by; never
 * their download URLs, which would carry the token.
 */
function attachmentsOf(message: Message): AttachmentMeta[] {
  const found: AttachmentMeta[] = [];
  const add = (kind: AttachmentKind, name: string, file: { file_id: string; file_size?: number }, mimeType?: string) =>
    found.push({ kind, name, fileId: file.file_id, ...(mimeType ? { mimeType } : {}), ...(file.file_size ? { sizeBytes: file.file_size } : {}) });
  const photo = message.photo?.at(-1);
  if (photo) add('image', 'photo.jpg', photo, 'image/jpeg');
  if (message.document) {
    const name = message.document.file_name ?? 'document';
    add(attachmentKindOf(message.document.mime_type, name), name, message.document, message.document.mime_type);
  }
  if (message.audio) add('audio', message.audio.file_name ?? 'audio', message.audio, message.audio.mime_type);
  if (message.video) add('video', message.video.file_name ?? 'video.mp4', message.video, message.video.mime_type);
  if (message.voice) add('audio', 'voice.ogg', message.voice, message.voice.mime_type);
  if (message.video_note) add('video', 'video-note.mp4', message.video_note, 'video/mp4');
  if (message.animation && !message.document) add('video', message.animation.file_name ?? 'animation.mp4', message.animation, message.animation.mime_type);
  // Animated stickers are gzipped Lottie, video ones WebM: only a still one is declared an image.
  const sticker = message.sticker;
  if (sticker) add(sticker.is_video ? 'video' : sticker.is_animated ? 'other' : 'image', `sticker ${sticker.emoji ?? ''}`.trim(), sticker, sticker.is_video ? 'video/webm' : sticker.is_animated ? undefined : 'image/webp');
  return found;
}
