/**
 * Who may use the terminal channel: the person at the keyboard, and only
 * them. They started the process, so they are its owner and an admin of the
 * one chat there is; there are no allowlists to apply.
 */
import type { ChatAddress, ChatInfo, Sender } from '../types.js';
import { noSuchChat } from './errors.js';
import type { ResolvedTerminalOptions } from './options.js';

/** The one chat of the terminal channel. */
export const TERMINAL_CHAT = {
  channel: 'terminal',
  chatId: 'local',
  kind: 'dm',
  scope: 'global',
} as const satisfies ChatInfo;

/** The person at the keyboard. */
export function localUser(options: Pick<ResolvedTerminalOptions, 'userId' | 'userName'>): Sender {
  return { id: options.userId, name: options.userName };
}

/** Whether `userId` is the person at the keyboard, who controls the process. */
export function isLocalUser(user: Sender, userId: string): boolean {
  return userId === user.id;
}

/** The address of the terminal's chat. */
export function localAddress(): ChatAddress {
  return { channel: TERMINAL_CHAT.channel, chatId: TERMINAL_CHAT.chatId };
}

/** @throws ChannelError when `chat` is not the terminal's one chat */
export function assertLocal(chat: ChatAddress): void {
  if (chat.channel !== TERMINAL_CHAT.channel || chat.chatId !== TERMINAL_CHAT.chatId) throw noSuchChat(chat);
}
