/**
 * The state of the fake Slack workspace: users, conversations, messages (with
 * their latest edit), ephemeral messages and slash-command responses.
 */

/** A member of the fake workspace. */
export interface FakeUser {
  id: string;
  name: string;
  isAdmin?: boolean;
  isOwner?: boolean;
  isBot?: boolean;
}

/** Conversation types, as in Slack's `channel_type`. */
export type ConversationType = 'im' | 'channel' | 'group' | 'mpim';

/** A conversation of the fake workspace. */
export interface FakeConversation {
  id: string;
  type: ConversationType;
  name?: string;
  /** The other member of a DM. */
  user?: string;
}

/** A message in a conversation, as it currently reads. */
export interface FakeMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  text: string;
  blocks?: unknown[];
  /** Every text this message had, oldest first. */
  history: string[];
  /** Whether approval buttons (`pa:` actions) were ever shown on it. */
  hadApprovalButtons: boolean;
  /** Every button ever shown on it, by action_id: a stale client can still press it. */
  buttons: Map<string, { action_id: string; value?: string; text?: { text?: string } }>;
  /** Posted through a slash command's response_url. */
  viaResponseUrl?: boolean;
  /** The message's metadata (chat.postMessage `metadata`), returned by the history methods with include_all_metadata. */
  metadata?: unknown;
}

/** Something only one user saw: an ephemeral message or an ephemeral command response. */
export interface FakeNotice {
  user: string;
  channel: string;
  text: string;
  kind: 'ephemeral' | 'response';
  thread_ts?: string;
  /** For command responses: ephemeral or in_channel. */
  response_type?: string;
  seq: number;
}

/** The workspace's users, conversations and messages. */
export class FakeWorkspace {
  readonly users = new Map<string, FakeUser>();
  readonly conversations = new Map<string, FakeConversation>();
  private readonly messagesByChannel = new Map<string, FakeMessage[]>();
  readonly notices: FakeNotice[] = [];
  private clock = 1_700_000_000;
  private counter = 0;

  constructor(
    readonly teamId: string,
    readonly bot: { userId: string; botId: string; name: string },
  ) {
    this.users.set(bot.userId, { id: bot.userId, name: bot.name, isBot: true });
  }

  /** A new, strictly increasing message timestamp. */
  nextTs(): string {
    this.counter += 1;
    return `${this.clock + this.counter}.${String(this.counter).padStart(6, '0')}`;
  }

  /** Stores a new message and returns it. */
  addMessage(message: Omit<FakeMessage, 'history' | 'hadApprovalButtons' | 'buttons' | 'ts'> & { ts?: string }): FakeMessage {
    const stored: FakeMessage = { ...message, ts: message.ts ?? this.nextTs(), history: [message.text], hadApprovalButtons: false, buttons: new Map() };
    noteButtons(stored, message.blocks);
    const list = this.messagesByChannel.get(message.channel) ?? [];
    list.push(stored);
    this.messagesByChannel.set(message.channel, list);
    return stored;
  }

  /** The message at `ts` in `channel`. */
  message(channel: string, ts: string): FakeMessage | undefined {
    return this.messagesByChannel.get(channel)?.find((message) => message.ts === ts);
  }

  /** Takes a message out as if it had never been posted (a sending that did not reach Slack). */
  removeMessage(channel: string, ts: string): void {
    const list = this.messagesByChannel.get(channel) ?? [];
    this.messagesByChannel.set(channel, list.filter((message) => message.ts !== ts));
  }

  /** Applies an edit; blocks are kept when the edit gives none, as Slack does. */
  updateMessage(message: FakeMessage, text: string | undefined, blocks: unknown[] | undefined): void {
    if (text !== undefined) message.text = text;
    if (blocks !== undefined) message.blocks = blocks;
    message.history.push(message.text);
    noteButtons(message, blocks);
  }

  /** Every message of a conversation, thread replies included, oldest first. */
  messages(channel: string): FakeMessage[] {
    return [...(this.messagesByChannel.get(channel) ?? [])];
  }

  /** Records a notice for one user. */
  addNotice(notice: Omit<FakeNotice, 'seq'>): void {
    this.notices.push({ ...notice, seq: this.notices.length });
  }
}

function noteButtons(message: FakeMessage, blocks: unknown[] | undefined): void {
  for (const block of blocks ?? []) {
    const elements = (block as { type?: string; elements?: unknown[] }).type === 'actions' ? ((block as { elements?: unknown[] }).elements ?? []) : [];
    for (const element of elements as { action_id?: string; value?: string; text?: { text?: string } }[]) {
      if (!element.action_id) continue;
      message.buttons.set(element.action_id, { ...element, action_id: element.action_id });
      if (element.action_id.startsWith('pa:')) message.hadApprovalButtons = true;
    }
  }
}
