/**
 * The kind of a conversation, shared by the channel contract (every adapter
 * says which kind a chat is) and the tools' approval rules (a DM can approve a
 * call, a group cannot). It lives here, under both, so neither imports the other.
 */

/** DM: one human and the bot. Group: a guild channel, group chat or Slack channel. */
export type ChatKind = 'dm' | 'group';
