/**
 * The channel contract: what every platform adapter provides to the agent, and
 * the normalised event and message shapes that cross that boundary. Platform
 * libraries never leak past an adapter.
 */
import type { ChatKind } from '../chat-kind.js';
import type { AttachmentKind } from './attachment-kind.js';
import type { Logger } from '../log.js';
import type { CommandSpec } from './command-grammar.js';
import type { Election } from './election.js';

export type { ChatKind } from '../chat-kind.js';
/** The election port adapters campaign through for a duty only one instance may hold: see `election.ts`. */
export type { Election, Leadership } from './election.js';
/** The kind of a file from its type or name, one rule for the adapters and the agent: see `attachment-kind.ts`. */
export { attachmentKindOf, type AttachmentKind } from './attachment-kind.js';
/** Commands are defined by the grammar: see `command-grammar.ts`. */
export type { CommandSpec } from './command-grammar.js';

/** Where a message goes: one conversation of one platform. */
export interface ChatAddress {
  /** The channel's name: `telegram`, `discord`, `slack`, `terminal`, `test`. */
  channel: string;
  /** Platform chat id (Telegram chat, Discord channel or thread, Slack conversation). */
  chatId: string;
  /** Sub-conversation: Telegram forum topic id, Slack `thread_ts`. */
  subId?: string;
}

/** A conversation with what the agent needs to know about it. */
export interface ChatInfo extends ChatAddress {
  kind: ChatKind;
  /** Group or channel name, when the platform has one. Untrusted text. */
  title?: string;
  /**
   * Admin-policy scope: `discord:guild:<id>`, `telegram:chat:<id>`, `slack:team:<id>`,
   * or `global` for DMs.
   */
  scope: string;
}

/** The person (or bot) behind an event. */
export interface Sender {
  /** Platform user id, unqualified (`42`, `U01ABC`). */
  id: string;
  /** Display name. Untrusted text. */
  name: string;
  isBot?: boolean;
}

/**
 * A file attached to a message, as the platform describes it. Only metadata
 * and a reference: the contents are fetched later, when the turn that reads
 * the message runs (`Channel.fetchAttachment`). Nothing here carries a
 * credential: Telegram's download URL holds the bot token, so only its
 * `file_id` is kept and the URL is made at download time.
 */
export interface AttachmentMeta {
  kind: AttachmentKind;
  /** The file name the sender gave, or one made up (`photo.jpg`). Untrusted text. */
  name: string;
  /** The type the platform declares (not trusted: the bytes are sniffed). */
  mimeType?: string;
  /** The size the platform declares. */
  sizeBytes?: number;
  /** The platform's id of the file: Telegram `file_id`, Slack file id, Discord attachment id. */
  fileId?: string;
  /** Where the file is fetched from, when the platform gives a URL without credentials in it (Discord, Slack `url_private`, a terminal's local file URL). */
  url?: string;
}

/** How much a fetch may bring and how long it may take. */
export interface FetchLimits {
  /** More bytes than this fails the fetch with `AttachmentFetchError` reason `too-big`. */
  maxBytes: number;
  /** Aborted: the fetch fails with reason `timeout`. */
  signal: AbortSignal;
}

interface InboundBase {
  chat: ChatInfo;
  sender: Sender;
  /** Milliseconds since the epoch. */
  receivedAt: number;
}

/** A text message. In groups, also the ones not addressed to the bot (kept as context). */
export interface InboundMessage extends InboundBase {
  type: 'message';
  messageId: string;
  text: string;
  /** DM, @mention, reply to the bot, or `groupActivation: always`. */
  mentionsBot: boolean;
  replyToBot: boolean;
  attachments: AttachmentMeta[];
}

/** How a command or button answer is shown. `private`: only the caller sees it, where the platform allows. */
export interface Reply {
  text: string;
  private?: boolean;
}

/** A command: `/stop`, a Discord or Slack slash command, a Telegram bot command. */
export interface InboundCommand extends InboundBase {
  type: 'command';
  /** Lower-case, without the slash or `@botname`: `stop`, `policy`. */
  name: string;
  /** The rest of the line. */
  args: string;
  messageId?: string;
  /**
   * Answers the command. Present for platform interactions (slash commands) that
   * must be answered through the interaction; absent for text commands, which the
   * agent answers with a normal `send` in the chat.
   */
  respond?(reply: Reply): Promise<void>;
}

/**
 * What a person can choose on a prompt: Approve / Always allow / Deny for a
 * tool call; Continue / Stop / Try another way when the agent seems stuck.
 */
export type PromptAction = 'approve' | 'always' | 'deny' | 'continue' | 'stop' | 'redirect';

/** A press of a prompt's button (or its letter typed in the terminal). */
export interface InboundApprovalAnswer extends InboundBase {
  type: 'approval';
  approvalId: string;
  action: PromptAction;
  /**
   * Shows a short notice to the presser only (Telegram toast, Discord ephemeral,
   * Slack ephemeral). Called at most once. The adapter acknowledges the press
   * within the platform's deadline whether or not this is called.
   */
  respond(reply: Reply): Promise<void>;
}

/** Everything a channel yields to the agent. */
export type InboundEvent = InboundMessage | InboundCommand | InboundApprovalAnswer;

/** A message the bot sent; one logical message may span several platform messages. */
export interface SentMessage {
  chat: ChatAddress;
  /** Platform ids of the parts, in order. */
  ids: string[];
}

/**
 * The channel-neutral prompt of a question only its requester may answer (a
 * tool call to approve, a loop to continue or stop); each channel renders it
 * as text with buttons, or letters in the terminal.
 */
export interface ApprovalPrompt {
  /** Opaque, short, random; the only thing a button payload carries besides the action. */
  id: string;
  /** The headline, plain words: `Approval needed`. */
  title: string;
  /** The tool the question is about, shown after the title. */
  tool?: string;
  /**
   * For a call that hands tools to background work: which tools will run
   * without asking. Shown first, right under the title, and never cut.
   */
  grant?: string;
  /** Plain words: what the call will do, or what is happening. */
  summary: string;
  /** Redacted, length-bounded arguments for display (JSON text). */
  args?: string;
  /** The model's stated reason, if it gave one. */
  reason?: string;
  /** The choices offered, in order. */
  actions: PromptAction[];
  requestedBy: Sender;
  expiresAt: number;
}

/** How a prompt ended, shown by editing it (buttons removed). */
export interface ApprovalOutcome {
  decision: 'approved' | 'always' | 'denied' | 'continued' | 'stopped' | 'redirected' | 'expired' | 'cancelled';
  /** Display name of who decided, when a person did. */
  by?: string;
  /** What an expiry counts as (`denied`, `stopped`), shown with it. */
  expiredAs?: string;
}

/**
 * The end of a reply still being written: the agent shows a streamed answer
 * with this mark until its final edit. A channel may show progress its own way
 * instead (the terminal leaves the line open) and drop the mark.
 */
export const IN_PROGRESS_MARK = ' …';

/**
 * What the presser of a button pincer no longer knows is told, on every
 * channel: a payload no adapter can read (an old or foreign button), or a
 * prompt the agent has no record of.
 */
export const STALE_BUTTON = 'This button is no longer valid.';

/** What a channel can do, for the agent's pacing of edits and typing. */
export interface ChannelCapabilities {
  /** Longest single platform message, in characters. */
  maxMessageLength: number;
  /** Minimum time between two edits of one message. */
  minEditIntervalMs: number;
  /** How often the typing indicator must be refreshed; 0 when the platform has none. */
  typingIntervalMs: number;
  /**
   * The one person who can reach this channel runs the process (a local
   * terminal): they count as an owner of the bot.
   */
  localOperator?: boolean;
  /**
   * The person sees their own answer to a prompt where they gave it (a typed
   * letter, then the outcome line): no acknowledgement notice is sent for it.
   */
  answersInPlace?: boolean;
  /**
   * An edit may show the message again at the end instead of changing it where
   * it is (a terminal cannot change what has scrolled away): an edit that a new
   * message is about to make redundant is better left out.
   */
  editsMayRepeat?: boolean;
  /** What a bot may upload here (see {@link Channel.sendFile}); absent on a channel that sends no files. */
  fileLimits?: FileLimits;
}

/**
 * Largest file the platform takes from a bot, in bytes: as a photo (shown
 * inline as an image) and as a document (any file). Each platform's limit is a
 * constant of its adapter.
 */
export interface FileLimits {
  photoBytes: number;
  documentBytes: number;
}

/**
 * A workspace file to send into a conversation (`files_send`): its bytes, read
 * once and checked against what the person approved, and how it is shown.
 */
export interface OutboundFile {
  /** The file name people see. */
  name: string;
  /** The file's contents. */
  bytes: Uint8Array;
  /** The type sniffed from the bytes. */
  mimeType: string;
  /** `photo`: shown as an image (Telegram sendPhoto, inline elsewhere); `document`: a file to download. */
  as: 'photo' | 'document';
  /** A line of text shown with the file. */
  caption?: string;
  /** Where the file is on this machine, for a channel that shows the path instead of sending (the terminal). */
  localPath?: string;
}

/** A small persisted key-value area an adapter may use (e.g. Telegram update ids). */
export interface ChannelState {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
  /** Reads, changes and writes one entry with no other update of it in between (across instances, on Redis). */
  update?(key: string, change: (current: unknown) => unknown): Promise<unknown>;
}

/** How a message is sent. */
export interface SendOptions {
  /** The message it replies to, where the platform shows replies. */
  replyTo?: string;
  /**
   * The newest message of the chat that it answers, quoted or not: a platform
   * that must look for a message sent before a crash by its position in the
   * chat (Telegram) looks after this one.
   */
  after?: string;
  /**
   * Names the message, so that sending it again (a retry, or a successor
   * instance resuming an answer that was being sent) is recognised where the
   * platform can tell (Discord's enforced nonce) and not posted twice.
   */
  idempotencyKey?: string;
  /**
   * The message may have gone out already (a successor resumes an answer that
   * was being sent): where the platform can look back (Slack's recent
   * history), the parts already there are not posted again.
   */
  resumed?: boolean;
  /**
   * The parts of this message that earlier attempts sent: they are not sent
   * again, and each part is recorded here as soon as the platform accepts it
   * (so a retry after a later part failed, or a successor, goes on from there).
   */
  parts?: PartLedger;
}

/** The parts of one message sent so far, kept across its attempts (SendOptions.parts). */
export interface PartLedger {
  /** Platform ids of the parts sent, by position in the message. */
  readonly sent: ReadonlyMap<number, string>;
  /** Records that the part at `index` went out as `id`; resolves once it is on record. */
  record(index: number, id: string): Promise<void>;
}

/** Books one use of a limit shared by every instance of the bot. */
export interface SharedBudget {
  /**
   * Books a use of at most `limit` per `periodMs` under `key`; resolves with
   * how long to wait before it (0: at once).
   */
  reserve(key: string, limit: number, periodMs: number): Promise<number>;
}

/** What an adapter receives from the composition root besides its own config. */
export interface ChannelDeps {
  log: Logger;
  /** The commands to register with the platform. */
  commands: CommandSpec[];
  /** Suggestions for a command argument's named source (`tool`: the tool names), for autocompletion. */
  completions(source: string): string[];
  state: ChannelState;
  /**
   * Picks the one instance that holds a platform duty only one may hold at a
   * time (Telegram's long poll). Default: `soleElection`, this process always wins.
   */
  election?: Election;
  /**
   * A budget shared with the other instances, for a platform limit that counts
   * the bot as a whole (Telegram's 30 messages a second). Default: none; the
   * adapter counts in its own process.
   */
  sharedBudget?: SharedBudget;
  /**
   * The agent acknowledges each event once it is stored (`acknowledge` of
   * event-queue.ts): an adapter that can hold the platform's receipt until then
   * (Telegram's update offset) does, so a crash in between loses nothing.
   */
  acknowledges?: boolean;
}

/**
 * Whether a channel is connected and receiving, for `/readyz`. `reason` is a
 * short sentence for the person reading it:
 * `telegram: no long poll has completed for 45 s; reconnecting`.
 */
export interface ChannelHealth {
  ready: boolean;
  reason?: string;
}

/**
 * A platform adapter: platform I/O only, behaviour lives in the agent.
 * Every method that talks to the platform retries transient failures (429 with
 * retry_after, 5xx, connection errors) before throwing a ChannelError.
 */
export interface Channel {
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  /** Commands this channel handles itself (the terminal's `/attach`), as `/help` lists them: `/name ARGS: what it does`. */
  readonly ownCommands?: readonly string[];
  /** Connects and registers commands; resolves once events can flow. */
  start(): Promise<void>;
  /** Disconnects; the event stream ends. */
  stop(): Promise<void>;
  /** One stream of inbound events; ends when the channel stops. */
  events(): AsyncIterable<InboundEvent>;
  /** Sends markdown text, rendered and split for the platform. */
  send(chat: ChatAddress, text: string, options?: SendOptions): Promise<SentMessage>;
  /** Replaces the text of a sent message (extra parts sent or emptied as needed). */
  edit(message: SentMessage, text: string): Promise<SentMessage>;
  /** Shows the typing indicator once (the agent refreshes it). */
  typing(chat: ChatAddress): Promise<void>;
  /** Shows a prompt with its buttons (Approve / Always allow / Deny, or another set). */
  sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage>;
  /** Edits a prompt to show its outcome, with the buttons removed. */
  resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void>;
  /** Whether the user holds an admin role in this chat's scope (Discord Manage Server, Telegram group admin, Slack admin). */
  isAdmin?(chat: ChatInfo, userId: string): Promise<boolean>;
  /** Whether the channel is connected and receiving now; a channel without it counts as ready. */
  health?(): ChannelHealth;
  /**
   * Whether the person may still use the bot in this chat: the allowlists
   * admit them and, where the platform tells, they are still in the group.
   * Background work asks before each firing and step, so that revoked access
   * ends it. A channel without it admits everyone it once admitted.
   */
  admits?(chat: ChatInfo, userId: string): Promise<boolean>;
  /**
   * Downloads an attachment of a message this channel delivered. Throws
   * `AttachmentFetchError` (too big, timed out, failed), whose message never
   * holds the URL it used. A channel without it cannot fetch files.
   */
  fetchAttachment?(attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array>;
  /**
   * Sends a file into the conversation, with its caption: a photo or a
   * document (`file.as`). `options.idempotencyKey` names the send, so that a
   * platform that can tell a repeat (Discord's nonce) does not post it twice.
   * A file over `capabilities.fileLimits` is refused by the caller first; a
   * refusal of the platform throws a ChannelError (`retryable` for 429 and
   * 5xx). A channel without it sends no files.
   */
  sendFile?(chat: ChatAddress, file: OutboundFile, options?: Pick<SendOptions, 'replyTo' | 'idempotencyKey'>): Promise<SentMessage>;
}

/** The thread key of a chat: `channel:chat[:sub]`. */
export function threadKeyOf(chat: ChatAddress): string {
  return chat.subId ? `${chat.channel}:${chat.chatId}:${chat.subId}` : `${chat.channel}:${chat.chatId}`;
}

/** The platform-qualified id of a user: `telegram:42`. */
export function qualifiedUserId(channel: string, userId: string): string {
  return `${channel}:${userId}`;
}

/** Events an adapter waits on until the agent has them stored, with how to tell it. */
const waitingForAck = new WeakMap<object, () => void>();

/** Calls `done` once `event` is acknowledged (by the agent, or by the adapter's own time limit). */
export function whenAcknowledged(event: object, done: () => void): void {
  waitingForAck.set(event, done);
}

/**
 * Tells the adapter that pushed `event` that the agent has it safe (stored, or
 * handled): the adapter may now tell the platform it was received. No-op for an
 * event nobody waits on.
 */
export function acknowledge(event: object): void {
  const done = waitingForAck.get(event);
  waitingForAck.delete(event);
  done?.();
}
