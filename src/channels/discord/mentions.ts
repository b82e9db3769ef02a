/**
 * Whether a guild message addresses the bot, and the text without the bot's
 * mention. Only an explicit mention of the bot user or of its managed role
 * counts: @everyone, @here and the implicit ping of a reply do not.
 */
import type { Guild, Message } from 'discord.js';

/** The bot as it can be mentioned in one guild. */
export interface BotIdentity {
  userId: string;
  /** The role Discord creates for the bot when it joins a guild. */
  roleId?: string;
}

/** The bot's user id and, in a guild, its managed role. */
export function botIdentityIn(guild: Guild | null, botUserId: string): BotIdentity {
  const roleId = guild?.roles.botRoleFor(botUserId)?.id;
  return roleId ? { userId: botUserId, roleId } : { userId: botUserId };
}

/** True for `<@bot>` / `<@!bot>` written in the text, or a mention of the bot's role. */
export function mentionsBot(message: Message, bot: BotIdentity): boolean {
  // Discord lists the replied-to author in `mentions` too; requiring the
  // mention in the text keeps a reply from counting as a mention.
  const byUser = message.mentions.users.has(bot.userId) && userMention(bot.userId).test(message.content);
  const byRole = Boolean(bot.roleId) && message.mentions.roles.has(bot.roleId as string);
  return byUser || byRole;
}

/** True when the message replies to one of the bot's messages. */
export function repliesToBot(message: Message, bot: BotIdentity): boolean {
  if (!message.reference?.messageId) return false;
  if (message.mentions.repliedUser) return message.mentions.repliedUser.id === bot.userId;
  const referenced = message.channel.messages.cache.get(message.reference.messageId);
  return referenced?.author?.id === bot.userId;
}

/** The text with the bot's user and role mentions removed. */
export function stripBotMentions(text: string, bot: BotIdentity): string {
  let result = text.replace(new RegExp(` ?${userMention(bot.userId).source} ?`, 'g'), ' ');
  if (bot.roleId) result = result.replace(new RegExp(` ?<@&${bot.roleId}> ?`, 'g'), ' ');
  return result.trim();
}

function userMention(userId: string): RegExp {
  return new RegExp(`<@!?${userId}>`);
}
