/**
 * The terminal channel's failures. Writing to a local stream does not fail
 * the way a platform call does, so what is left is addressing mistakes: a chat
 * that is not the terminal's, a message without an id.
 */
import { ChannelError } from '../../errors.js';
import type { ChatAddress } from '../types.js';

const CHANNEL = 'terminal';

/** A message or prompt addressed to a chat the terminal does not have. */
export function noSuchChat(chat: ChatAddress): ChannelError {
  return new ChannelError(CHANNEL, `no such chat: ${chat.channel}:${chat.chatId}`);
}

/** An edit of a message that carries no id. */
export function missingMessageId(): ChannelError {
  return new ChannelError(CHANNEL, 'cannot edit a message without an id');
}
