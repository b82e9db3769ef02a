/**
 * An in-memory chat platform and its channel adapter, for the scenario suite
 * and the runtime's unit tests. The {@link TestPlatform} holds what outlives one
 * adapter (chats, everything the bot showed, admins, injected faults); each
 * {@link TestChannel} is one adapter instance over it, so a simulated restart
 * is `platform.createChannel()` against the same recorded state.
 */
import { admits, allowlists, NOT_AVAILABLE, ownerIdsOn, type Allowlists } from '../../src/channels/access.js';
import { approvalPromptText, approvalResolvedText } from '../../src/channels/approval-text.js';
import { EventQueue } from '../../src/channels/event-queue.js';
import { splitMessage } from '../../src/channels/split.js';
import type {
  PromptAction,
  ApprovalOutcome,
  ApprovalPrompt,
  AttachmentMeta,
  Channel,
  ChannelCapabilities,
  ChannelDeps,
  ChatAddress,
  ChatInfo,
  InboundApprovalAnswer,
  InboundCommand,
  InboundEvent,
  InboundMessage,
  Reply,
  Sender,
  SendOptions,
  SentMessage,
} from '../../src/channels/types.js';
import { ChannelError } from '../../src/errors.js';
import { PlatformState, type NoticeRecord, type SentRecord, type TestPlatformOptions } from './test-platform.js';

export * from './test-platform.js';

/** The in-memory platform: its state plus a factory of adapters, the latest of which receives injected events. */
export class TestPlatform extends PlatformState {
  private current?: TestChannel;

  /** A new adapter over this platform; later injections go to it (a restarted bot's adapter). */
  createChannel(deps?: ChannelDeps, options?: TestChannelOptions): TestChannel {
    this.current = new TestChannel(this, deps, options);
    return this.current;
  }

  /** The adapter created last; throws before the first `createChannel`. */
  get channel(): TestChannel {
    if (!this.current) throw new ChannelError(this.name, 'no channel created yet: call createChannel()');
    return this.current;
  }

  /** The adapter created last, if any. */
  get latestChannel(): TestChannel | undefined {
    return this.current;
  }
}

/** What {@link TestChannel.userMessage} needs; flags default to what a DM implies. */
export interface UserMessageInput {
  chat: ChatInfo;
  sender: Sender;
  text: string;
  /** Default: true in a DM, false in a group. */
  mentionsBot?: boolean;
  replyToBot?: boolean;
  attachments?: AttachmentMeta[];
  /** The platform's id of the message (default: a new one); a number orders it as Telegram's ids do. */
  messageId?: string;
}

/** What {@link TestChannel.command} needs. */
export interface CommandInput {
  chat: ChatInfo;
  sender: Sender;
  name: string;
  args?: string;
  /**
   * A slash-command interaction: the event gets `respond`, which records private
   * replies as notices and public ones as bot messages. Default: a text command.
   */
  interaction?: boolean;
}

/** The config of one test adapter: its allowlists, as a real adapter's config section holds them. */
export interface TestChannelOptions {
  /** User ids; empty or unset: everyone. */
  allowedUsers?: readonly string[];
  /** Group chat ids; empty or unset: every group. */
  allowedChats?: readonly string[];
  /** Config `owners` (`test:u1`, ...): the allowlists always admit this platform's ones. */
  owners?: readonly string[];
}

/**
 * The adapter over a {@link TestPlatform}: the agent's outbound calls are
 * recorded there, and tests inject inbound events with `userMessage`,
 * `command` and `press`. Events from outside the allowlists (the shared
 * access rule) never reach the agent: they are kept in `platform.refused`, and
 * a refused command interaction or button press is told it is not available.
 */
export class TestChannel implements Channel {
  readonly platform: TestPlatform;
  private readonly queue = new EventQueue<InboundEvent>();
  private readonly allowlists: Allowlists;

  /** A channel over `platform`, or over a new platform made from these options. */
  constructor(platform: TestPlatform | TestPlatformOptions = {}, private readonly deps?: ChannelDeps, options: TestChannelOptions = {}) {
    this.platform = platform instanceof TestPlatform ? platform : new TestPlatform(platform);
    this.allowlists = allowlists({
      users: options.allowedUsers,
      conversations: options.allowedChats,
      owners: ownerIdsOn(options.owners ?? [], this.platform.name),
    });
  }

  /** The platform's channel name. */
  get name(): string {
    return this.platform.name;
  }

  /** The platform's (configurable) capabilities. */
  get capabilities(): ChannelCapabilities {
    return this.platform.capabilities;
  }

  /** Whether `stop` was called (or the stream ended). */
  get stopped(): boolean {
    return this.queue.isClosed;
  }

  /** Registers the commands, as a real adapter does at connect. */
  async start(): Promise<void> {
    this.platform.registeredCommands = [...(this.deps?.commands ?? [])];
  }

  /** Ends the event stream; injecting afterwards throws. */
  async stop(): Promise<void> {
    this.queue.close();
  }

  /** The injected events, in order. */
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }

  /** Shorthand for `platform.waitFor`. */
  waitFor<T>(check: () => T | false | null | undefined, timeoutMs?: number, what?: string): Promise<T> {
    return this.platform.waitFor(check, timeoutMs, what);
  }

  /** Records the text, split at `maxMessageLength` like a real platform. */
  async send(chat: ChatAddress, text: string, options: SendOptions = {}): Promise<SentMessage> {
    await this.platform.outbound('send');
    const ids = this.parts(text).map((part) => {
      const record = this.record(chat, part, options.replyTo);
      if (options.idempotencyKey) record.idempotencyKey = options.idempotencyKey;
      if (options.after) record.after = options.after;
      return record.id;
    });
    this.platform.changed();
    return { chat, ids };
  }

  /** Replaces the parts' texts; extra parts are sent, surplus parts emptied. */
  async edit(message: SentMessage, text: string): Promise<SentMessage> {
    await this.platform.outbound('edit');
    const records = message.ids.map((id) => this.sentRecord(id));
    const parts = this.parts(text);
    parts.forEach((part, i) => {
      const record = records[i];
      if (record) setText(record, part);
      else records.push(this.record(message.chat, part));
    });
    for (const surplus of records.slice(parts.length)) {
      setText(surplus, '');
      surplus.deleted = true;
    }
    this.platform.changed();
    return { chat: message.chat, ids: records.slice(0, parts.length).map((record) => record.id) };
  }

  /** Records the call in `platform.typingCalls`. */
  async typing(chat: ChatAddress): Promise<void> {
    await this.platform.outbound('typing');
    this.platform.typingCalls.push({ chat, at: Date.now() });
    this.platform.changed();
  }

  /** Records the prompt with its buttons (no Always allow when it is not offered). */
  async sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    await this.platform.outbound('sendApproval');
    const messageId = this.platform.nextId('m');
    const actions = [...prompt.actions];
    const text = approvalPromptText(prompt);
    this.platform.approvals.push({ messageId, chat, prompt, text, actions, state: 'shown' });
    this.platform.changed();
    return { chat, ids: [messageId] };
  }

  /** Shows the outcome on the prompt and removes its buttons. */
  async resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    await this.platform.outbound('resolveApproval');
    const record = this.platform.approvals.find((a) => a.messageId === message.ids[0]);
    if (!record) throw new ChannelError(this.name, `approval message not found: ${message.ids[0]}`);
    Object.assign(record, { text: approvalResolvedText(prompt, outcome), actions: [], state: 'resolved', outcome });
    this.platform.changed();
  }

  /** Whether `userId` is in the platform's admin set (in any chat), or an admin of this chat alone. */
  async isAdmin(chat: ChatInfo, userId: string): Promise<boolean> {
    return this.platform.admins.has(userId) || Boolean(this.platform.chatAdmins.get(chat.chatId)?.has(userId));
  }

  /** The allowlists, and whether the platform still has the person (see `platform.removed`). */
  async admits(chat: ChatInfo, userId: string): Promise<boolean> {
    return !this.platform.removed.has(userId) && admits(this.allowlists, { kind: chat.kind, userId, workspaceId: null, conversationId: chat.chatId });
  }

  /** A user writes in a chat. */
  userMessage(input: UserMessageInput): InboundMessage {
    return this.inject({
      type: 'message',
      chat: input.chat,
      sender: input.sender,
      receivedAt: Date.now(),
      messageId: input.messageId ?? this.platform.nextId('u'),
      text: input.text,
      mentionsBot: input.mentionsBot ?? input.chat.kind === 'dm',
      replyToBot: input.replyToBot ?? false,
      attachments: input.attachments ?? [],
    });
  }

  /** A user runs a command: a text command, or a slash-command interaction with `respond`. */
  command(input: CommandInput): InboundCommand {
    const event: InboundCommand = {
      type: 'command',
      chat: input.chat,
      sender: input.sender,
      receivedAt: Date.now(),
      name: input.name.toLowerCase(),
      args: input.args ?? '',
    };
    if (input.interaction) event.respond = (reply) => this.replyToCommand(input, reply);
    else event.messageId = this.platform.nextId('u');
    return this.inject(event);
  }

  /** A user presses a button of the approval prompt with id `approvalId`. */
  press(approvalId: string, action: PromptAction, sender: Sender): InboundApprovalAnswer {
    const record = this.platform.approvals.find((a) => a.prompt.id === approvalId);
    if (!record) throw new ChannelError(this.name, `no approval prompt with id ${approvalId}`);
    const chat = this.platform.chatInfo(record.chat);
    return this.inject({
      type: 'approval',
      chat,
      sender,
      receivedAt: Date.now(),
      approvalId,
      action,
      // A button press answers privately whatever the reply asks for, like a toast.
      respond: async (reply) => this.notice(sender.id, chat, reply.text, 'approval'),
    });
  }

  private inject<E extends InboundEvent>(event: E): E {
    if (this.queue.isClosed) throw new ChannelError(this.name, 'this channel is stopped; inject into platform.channel');
    if (!this.admitsEvent(event)) return this.refuse(event);
    this.platform.rememberChat(event.chat);
    this.platform.inbound.push(event);
    this.queue.push(event);
    this.platform.changed();
    return event;
  }

  private admitsEvent(event: InboundEvent): boolean {
    const { chat, sender } = event;
    return admits(this.allowlists, { kind: chat.kind, userId: sender.id, workspaceId: null, conversationId: chat.chatId });
  }

  /** Keeps a refused event; a command interaction or a press is told privately, a message ignored. */
  private refuse<E extends InboundEvent>(event: E): E {
    this.platform.refused.push(event);
    if (event.type !== 'message') void event.respond?.({ text: NOT_AVAILABLE, private: true });
    this.platform.changed();
    return event;
  }

  private async replyToCommand(input: CommandInput, reply: Reply): Promise<void> {
    if (reply.private) this.notice(input.sender.id, input.chat, reply.text, 'command');
    else await this.send(input.chat, reply.text);
  }

  private notice(userId: string, chat: ChatAddress, text: string, source: NoticeRecord['source']): void {
    this.platform.notices.push({ userId, chat, text, source });
    this.platform.changed();
  }

  private parts(text: string): string[] {
    return splitMessage(text, this.capabilities.maxMessageLength);
  }

  private record(chat: ChatAddress, text: string, replyTo?: string): SentRecord {
    const record: SentRecord = { id: this.platform.nextId('m'), chat, text, history: [text], deleted: false };
    if (replyTo) record.replyTo = replyTo;
    this.platform.sent.push(record);
    return record;
  }

  private sentRecord(id: string): SentRecord {
    const record = this.platform.sent.find((r) => r.id === id);
    if (!record) throw new ChannelError(this.name, `message to edit not found: ${id}`);
    return record;
  }
}

function setText(record: SentRecord, text: string): void {
  if (record.text === text) return;
  record.text = text;
  record.history.push(text);
}
