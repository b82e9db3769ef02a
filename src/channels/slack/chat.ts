/**
 * Slack conversations as the agent sees them: kind (DM or group), policy
 * scope and thread address. One place decides these so that messages, button
 * presses and slash commands from one conversation land in the same thread.
 */
import type { ChatInfo, ChatKind } from '../types.js';
import type { SlackDirectory } from './directory.js';

/** The channel name in thread keys. */
export const SLACK = 'slack';

/**
 * The kind of a conversation: `im` is a DM; channels, private channels and
 * group DMs (`mpim`) are groups. Without a `channel_type` (app_mention events,
 * interactions), `conversations.info` tells, or else the id's `D` prefix.
 */
export async function chatKindOf(channelId: string, channelType: string | undefined, directory: SlackDirectory): Promise<ChatKind> {
  if (channelType) return channelType === 'im' ? 'dm' : 'group';
  const conversation = await directory.conversation(channelId);
  if (conversation) return conversation.isIm ? 'dm' : 'group';
  return channelId.startsWith('D') ? 'dm' : 'group';
}

/** Where a conversation of a workspace is: its address, kind, title and policy scope. */
export interface ChatParts {
  channelId: string;
  kind: ChatKind;
  subId?: string;
  teamId?: string;
  title?: string;
}

/** The ChatInfo of a conversation: DMs share the `global` scope, channels their workspace's. */
export function chatInfoOf(parts: ChatParts): ChatInfo {
  const chat: ChatInfo = {
    channel: SLACK,
    chatId: parts.channelId,
    kind: parts.kind,
    scope: parts.kind === 'dm' ? 'global' : `slack:team:${parts.teamId ?? 'unknown'}`,
  };
  if (parts.subId) chat.subId = parts.subId;
  if (parts.title) chat.title = parts.title;
  return chat;
}

/** A group's title (`#name`), when Slack tells it. */
export async function groupTitle(channelId: string, directory: SlackDirectory): Promise<string | undefined> {
  const conversation = await directory.conversation(channelId);
  return conversation?.name ? `#${conversation.name}` : undefined;
}
