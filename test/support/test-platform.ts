/**
 * The state of the in-memory test platform: everything the bot showed, the
 * chats it has seen, admins and injected faults, with `waitFor` to await a
 * change. It outlives adapters, which is how a restart is simulated.
 */
import {
  threadKeyOf,
  type PromptAction,
  type ApprovalOutcome,
  type ApprovalPrompt,
  type ChannelCapabilities,
  type ChatAddress,
  type ChatInfo,
  type CommandSpec,
  type InboundEvent,
} from '../../src/channels/types.js';
import { ChannelError } from '../../src/errors.js';

/** One platform message the bot sent (one part of a split message), with its edits. */
export interface SentRecord {
  id: string;
  chat: ChatAddress;
  /** The latest text; empty once an edit needed fewer parts. */
  text: string;
  /** Every version, oldest first; the last one is `text`. */
  history: string[];
  replyTo?: string;
  /** The name the message was sent under (SendOptions.idempotencyKey), if any. */
  idempotencyKey?: string;
  /** The newest message it answers (SendOptions.after), if any. */
  after?: string;
  /** Emptied by an edit that needed fewer parts. */
  deleted: boolean;
}

/** An approval prompt the bot showed, in its current state. */
export interface ApprovalRecord {
  messageId: string;
  chat: ChatAddress;
  prompt: ApprovalPrompt;
  /** Current text: the prompt, or the resolved text once resolved. */
  text: string;
  /** Buttons currently offered; empty once resolved. */
  actions: PromptAction[];
  state: 'shown' | 'resolved';
  outcome?: ApprovalOutcome;
}

/** A notice only one user saw (a toast or an ephemeral reply). */
export interface NoticeRecord {
  userId: string;
  chat: ChatAddress;
  text: string;
  source: 'command' | 'approval';
}

/** One call of `typing`. */
export interface TypingRecord {
  chat: ChatAddress;
  at: number;
}

/** Outbound methods that can be made to fail. */
export type FailingMethod = 'send' | 'edit' | 'typing' | 'sendApproval' | 'resolveApproval';

/** Options of {@link TestPlatform}. */
export interface TestPlatformOptions {
  /** The channel name in thread keys; default `test`. */
  name?: string;
  capabilities?: Partial<ChannelCapabilities>;
  /** User ids that `isAdmin` confirms, in every chat. */
  admins?: Iterable<string>;
  /** Delay of every outbound call, in ms. */
  latencyMs?: number;
}

/** Defaults of {@link TestPlatformOptions.capabilities}. */
export const TEST_CAPABILITIES: ChannelCapabilities = { maxMessageLength: 4000, minEditIntervalMs: 0, typingIntervalMs: 0 };

/** `waitFor` gave up; the message holds what the platform recorded, to see why. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  constructor(readonly what: string, readonly timeoutMs: number, transcript: string) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}; the platform saw:\n${transcript}`);
  }
}

/** A DM between the bot and `userId`, chat id `dm-<userId>`. */
export function testDm(userId: string, channel = 'test'): ChatInfo {
  return { channel, chatId: `dm-${userId}`, kind: 'dm', scope: 'global' };
}

/** A group chat with scope `<channel>:group:<id>`. */
export function testGroup(id: string, title = `Group ${id}`, channel = 'test'): ChatInfo {
  return { channel, chatId: id, kind: 'group', title, scope: `${channel}:group:${id}` };
}

/**
 * What the in-memory platform keeps across adapters: chats, what the bot
 * showed, admins, injected faults. {@link TestPlatform} adds the adapter factory.
 */
export class PlatformState {
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  readonly admins: Set<string>;
  /** User ids that `isAdmin` confirms in one chat only, by chat id. */
  readonly chatAdmins = new Map<string, Set<string>>();
  /** Users the platform no longer has in its chats (left, removed, or taken off an allowlist). */
  readonly removed = new Set<string>();
  latencyMs: number;
  /** Every bot message part, oldest first (approval prompts are in `approvals`). */
  readonly sent: SentRecord[] = [];
  readonly approvals: ApprovalRecord[] = [];
  readonly notices: NoticeRecord[] = [];
  readonly typingCalls: TypingRecord[] = [];
  /** Every event injected and passed to the agent, oldest first. */
  readonly inbound: InboundEvent[] = [];
  /** Every event injected from outside the adapter's allowlists, oldest first. */
  readonly refused: InboundEvent[] = [];
  /** The commands the latest adapter registered at start. */
  registeredCommands: CommandSpec[] = [];
  private readonly chats = new Map<string, ChatInfo>();
  private readonly failures = new Map<FailingMethod, { count: number; retryable: boolean }>();
  private readonly listeners = new Set<() => void>();
  private lastId = 0;

  constructor(options: TestPlatformOptions = {}) {
    this.name = options.name ?? 'test';
    this.capabilities = { ...TEST_CAPABILITIES, ...options.capabilities };
    this.admins = new Set(options.admins ?? []);
    this.latencyMs = options.latencyMs ?? 0;
  }

  /** Makes the next `count` calls of `method` throw a ChannelError (retryable unless told otherwise). */
  failNext(method: FailingMethod, count: number, options: { retryable?: boolean } = {}): void {
    this.failures.set(method, { count, retryable: options.retryable ?? true });
  }

  /** Visible bot messages in a chat (not emptied parts, not prompts), oldest first. */
  messagesIn(chat: ChatAddress): SentRecord[] {
    const key = threadKeyOf(chat);
    return this.sent.filter((record) => !record.deleted && threadKeyOf(record.chat) === key);
  }

  /** The newest visible bot message in a chat. */
  lastMessage(chat: ChatAddress): SentRecord | undefined {
    return this.messagesIn(chat).at(-1);
  }

  /** Approval prompts shown in a chat, oldest first. */
  approvalsIn(chat: ChatAddress): ApprovalRecord[] {
    const key = threadKeyOf(chat);
    return this.approvals.filter((record) => threadKeyOf(record.chat) === key);
  }

  /** Notices only `userId` saw, oldest first. */
  noticesFor(userId: string): NoticeRecord[] {
    return this.notices.filter((notice) => notice.userId === userId);
  }

  /**
   * Resolves with the first truthy (not false, null or undefined) result of
   * `check`, tried on every change of the platform and every 10 ms.
   *
   * @example const reply = await platform.waitFor(() => platform.lastMessage(chat), 2000, 'a reply');
   */
  waitFor<T>(check: () => T | false | null | undefined, timeoutMs = 2000, what = 'the condition'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const finish = () => {
        clearInterval(poll);
        clearTimeout(timer);
        this.listeners.delete(attempt);
      };
      const attempt = () => {
        try {
          const value = check();
          if (value === false || value === null || value === undefined) return;
          finish();
          resolve(value);
        } catch (error) {
          finish();
          reject(error);
        }
      };
      const poll = setInterval(attempt, 10);
      const timer = setTimeout(() => {
        finish();
        reject(new WaitTimeoutError(what, timeoutMs, this.transcript()));
      }, timeoutMs);
      this.listeners.add(attempt);
      attempt();
    });
  }

  /** Everything recorded, one line each, for failure messages. */
  transcript(): string {
    const lines = [
      ...this.inbound.map((e) => `in  ${threadKeyOf(e.chat)} ${e.sender.name}: ${describeInbound(e)}`),
      ...this.refused.map((e) => `refused ${threadKeyOf(e.chat)} ${e.sender.name}: ${describeInbound(e)}`),
      ...this.sent.map((r) => `out ${threadKeyOf(r.chat)} ${r.id}${r.deleted ? ' (deleted)' : ''}: ${r.text}`),
      ...this.approvals.map((a) => `approval ${threadKeyOf(a.chat)} ${a.messageId} [${a.state}]: ${a.prompt.tool}`),
      ...this.notices.map((n) => `notice to ${n.userId}: ${n.text}`),
    ];
    return lines.length ? lines.join('\n') : '(nothing)';
  }

  /** @internal A fresh platform id, unique across adapters. */
  nextId(prefix: string): string {
    return `${prefix}${++this.lastId}`;
  }

  /** @internal Records a change and wakes `waitFor`. */
  changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** @internal Remembers the kind and scope of a chat seen in an event. */
  rememberChat(chat: ChatInfo): void {
    this.chats.set(threadKeyOf(chat), chat);
  }

  /** @internal The full description of a chat the platform has seen (a DM when unknown). */
  chatInfo(chat: ChatAddress): ChatInfo {
    return this.chats.get(threadKeyOf(chat)) ?? { ...chat, kind: 'dm', scope: 'global' };
  }

  /** @internal Applies latency, then throws when a failure of `method` was requested. */
  async outbound(method: FailingMethod): Promise<void> {
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    const failure = this.failures.get(method);
    if (!failure || failure.count <= 0) return;
    failure.count--;
    throw new ChannelError(this.name, `simulated ${method} failure`, failure.retryable);
  }
}

function describeInbound(event: InboundEvent): string {
  if (event.type === 'message') return event.text;
  if (event.type === 'command') return `/${event.name} ${event.args}`.trimEnd();
  return `[${event.action} ${event.approvalId}]`;
}
