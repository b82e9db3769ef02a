/**
 * Whether the person whose job or routine it is may still use the bot where
 * it was created. Background work asks before each firing and step: someone
 * taken off an allowlist or out of the group stops acting through the bot.
 */
import type { Outbox } from '../engine/outbox.js';
import type { ChatInfo } from '../channels/types.js';

/** True while the origin's channel admits `owner` (`platform:userId`) in `origin`; true when the channel cannot tell. */
export async function ownerAdmitted(outbox: Pick<Outbox, 'channelOf'>, owner: string, origin: ChatInfo): Promise<boolean> {
  const channel = outbox.channelOf({ channel: origin.channel, chatId: origin.chatId });
  if (!channel?.admits) return true;
  return channel.admits(origin, owner.slice(owner.indexOf(':') + 1));
}

/** Why background work stopped when its owner lost access. */
export function accessLost(ownerName: string): string {
  return `${ownerName} no longer has access to the conversation it was created in`;
}
