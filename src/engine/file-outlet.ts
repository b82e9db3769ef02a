/**
 * The file outlet of a conversation (the tools' FileOutlet): what `files_send`
 * reaches of a channel, through the outbox. Each file is named for the turn
 * it is sent in and for what it is, so that a rerun of the turn (after a
 * restart, the model calling again) does not post it twice, while the same
 * file asked for again in a later turn is sent again.
 */
import type { ChatAddress } from '../channels/types.js';
import type { FileOutlet } from '../tools/types.js';
import type { Outbox } from './outbox.js';

/**
 * The outlet of `chat`, for the turn named `turn` (`<thread>:<turn id>`),
 * sending files of at most `maxBytes` (`attachments.maxBytes`), as replies to
 * `replyTo` where the platform shows replies (a group's turn answers its
 * asker); undefined for a channel that sends no files.
 */
export function fileOutlet(outbox: Outbox, chat: ChatAddress, turn: string, maxBytes: number, replyTo?: string): FileOutlet | undefined {
  const channel = outbox.channelOf(chat);
  if (!channel?.sendFile) return undefined;
  const nameOf = (key: string) => `file:${turn}:${key}`;
  const limits = channel.capabilities.fileLimits;
  return {
    channel: chat.channel,
    ...(limits ? { limits } : {}),
    maxBytes,
    send: (file, key) => outbox.sendFile(chat, file, nameOf(key), replyTo ? { replyTo } : {}),
  };
}
