/**
 * The contract a channel's test driver fulfils so that the shared scenario suite
 * runs the same conversations on every channel: the test channel, Telegram,
 * Discord and Slack (each through its fake server and the real platform
 * library), and the terminal (through its input and output streams).
 */
import type { PromptAction, Channel, ChannelDeps } from '../../src/channels/types.js';

/** A person in the scenarios. */
export interface ScenarioUser {
  /** Platform user id (unqualified). */
  id: string;
  name: string;
}

/** A conversation in the scenarios. */
export interface ScenarioChat {
  kind: 'dm' | 'group';
  /** Platform chat id. */
  id: string;
  /** Sub-conversation (Telegram topic, Slack thread_ts) when the scenario uses one. */
  subId?: string;
  title?: string;
}

/** A message the bot has shown in a chat, with the latest edit applied. */
export interface BotMessage {
  messageId: string;
  /** Text as a person reads it (markup removed). */
  text: string;
}

/** An approval prompt the bot has shown. */
export interface SeenApproval {
  messageId: string;
  /** Current text of the prompt (after any edit). */
  text: string;
  /** The buttons currently offered; empty once resolved. */
  actions: PromptAction[];
}

/** The allowlists a scenario sets, in its people and chats; the driver writes them into its channel's config. */
export interface ScenarioAccess {
  /** The user list. */
  users?: readonly ScenarioUser[];
  /** The conversation list: groups from `group()`. */
  conversations?: readonly ScenarioChat[];
}

/** What a new adapter is configured with besides its deps. */
export interface ChannelSetup {
  /** Config `owners`, as `platform:userId` (the harness lists `users[0]`). */
  owners: readonly string[];
  /** Allowlists; unset: everyone may use the bot. */
  access?: ScenarioAccess;
}

/** A file a scenario sends. */
export interface ScenarioFile {
  name: string;
  mimeType: string;
  bytes: Buffer;
  /** A picture sent the way a platform sends photos, where it has one (Telegram: a photo, not a document), of this size. */
  photo?: { width: number; height: number };
}

/** A file the bot sent into a chat, as the fake platform received it. */
export interface SentFile {
  name: string;
  size: number;
  /** SHA-256 of the bytes received, hex. */
  sha256: string;
  caption?: string;
  /** How the platform shows it: `photo`, an image shown inline (Telegram sendPhoto; an image attachment elsewhere), or `document`. */
  shownAs: 'photo' | 'document';
}

/**
 * Drives one channel's fake platform server. `users[0]` is an owner of the bot
 * (listed in config owners) and an admin of the group; `users[1]` and `users[2]`
 * are ordinary members of the group.
 */
export interface ScenarioDriver {
  /** The channel's name, as in thread keys (`telegram`, `discord`, ...). */
  readonly name: string;
  readonly users: readonly ScenarioUser[];
  /** Starts the fake platform. Called once before the scenarios. */
  setup(): Promise<void>;
  /** Stops the fake platform. */
  teardown(): Promise<void>;
  /**
   * Why the channel has no allowlists (say a terminal: one local user, the
   * owner), or undefined when it has them. The access scenarios are skipped,
   * showing this reason, instead of faked.
   */
  readonly noAllowlists?: string;
  /** Why the channel has no group chats, or undefined when it has them; group scenarios are skipped with this reason. */
  readonly noGroups?: string;
  /**
   * Why only one person can use the channel, or undefined when several can:
   * scenarios that need a second person are skipped with this reason, and
   * `users` may name that one person in every role.
   */
  readonly singleUser?: string;
  /** Why a prompt cannot be pressed once answered, cancelled or shown before a restart; those presses are not tried. */
  readonly noLatePresses?: string;
  /** A new adapter instance pointed at the fake (called again after a simulated restart). */
  createChannel(deps: ChannelDeps, setup?: ChannelSetup): Channel;
  /** The DM between the bot and `user`. */
  dm(user: ScenarioUser): ScenarioChat;
  /** A group chat (guild channel, supergroup, Slack channel) with every user in it. A fresh one per call. */
  group(): ScenarioChat;
  /** A user writes in a chat; in groups `mention` addresses the bot, `replyToBot` replies to its last message. */
  sendMessage(chat: ScenarioChat, user: ScenarioUser, text: string, options?: { mention?: boolean; replyToBot?: boolean }): Promise<void>;
  /**
   * A user sends a file with a message the platform's way (a Telegram
   * document with a caption, a Discord attachment, a Slack file share,
   * `/attach PATH text` at the terminal). Absent: the channel takes no files.
   */
  sendFile?(chat: ScenarioChat, user: ScenarioUser, text: string, file: ScenarioFile): Promise<void>;
  /**
   * A user sends a voice message the platform's way (a Telegram voice note,
   * a Discord voice message, which carries no text, a Slack audio file
   * share). Absent: the channel has none.
   */
  sendVoice?(chat: ScenarioChat, user: ScenarioUser, text: string, file: ScenarioFile & { durationSecs: number }): Promise<void>;
  /** A user runs a command the platform's way (text `/cmd`, slash command interaction, `/pincer cmd`). */
  sendCommand(chat: ScenarioChat, user: ScenarioUser, name: string, args?: string): Promise<void>;
  /** A user presses a button of an approval prompt. */
  pressApproval(chat: ScenarioChat, user: ScenarioUser, approval: SeenApproval, action: PromptAction): Promise<void>;
  /** Files the bot sent into the chat (its topic or thread), oldest first. Absent: the channel uploads no files. */
  sentFiles?(chat: ScenarioChat): SentFile[];
  /**
   * The platform answers the next upload of a `kind` of file with a failure:
   * `too-large` (413), or `rate-limited` (429 with a retry time of 1 s, then it takes it).
   */
  failNextUpload?(failure: 'too-large' | 'rate-limited', kind: 'photo' | 'document'): void;
  /** Every message the bot has shown in the chat (not prompts, not private notices), oldest first. */
  messages(chat: ScenarioChat): BotMessage[];
  /** Every approval prompt shown in the chat, oldest first. */
  approvals(chat: ScenarioChat): SeenApproval[];
  /** Notices only `user` could see (toasts, ephemeral replies), oldest first. */
  privateNotices(user: ScenarioUser): string[];
}

/** The platform ids of a scenario's allowlists, for a driver's config (empty lists: no restriction). */
export function allowlistIds(access: ScenarioAccess | undefined): { users: string[]; conversations: string[] } {
  return { users: (access?.users ?? []).map((user) => user.id), conversations: (access?.conversations ?? []).map((chat) => chat.id) };
}
