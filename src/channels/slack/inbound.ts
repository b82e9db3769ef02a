/**
 * Where a Slack message enters: `message` and `app_mention` events become
 * InboundMessages. Every message of an allowed conversation is passed on (the
 * agent keeps unaddressed channel messages as context); in channels, those
 * that address the bot (an @mention, or a followed thread) are flagged and get
 * the thread of the addressing message as their address, where the reply goes.
 */
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import { attachmentKindOf } from '../attachment-kind.js';
import type { AttachmentMeta, ChatKind, InboundEvent, InboundMessage, Sender } from '../types.js';
import { isAllowed, type SlackAccessConfig } from './access.js';
import { chatInfoOf, chatKindOf, groupTitle } from './chat.js';
import type { SlackDirectory } from './directory.js';
import type { FollowedThreads } from './followed-threads.js';
import { RecentKeys, SerialChains } from './inbound-order.js';
import { mentionsUser, plainTextFromSlack } from './inbound-text.js';
import { ThreadContext } from './thread-context.js';
import type { BotIdentity } from './web-api.js';

/** The fields of a Slack `message` / `app_mention` event the adapter reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  bot_profile?: { name?: string };
  username?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  parent_user_id?: string;
  team?: string;
  files?: { id?: string; name?: string; title?: string; mimetype?: string; size?: number; url_private?: string }[];
}

/** What the intake of events needs from the adapter. */
export interface IntakeDeps {
  /** The `slack` config, with config `owners` for the allowlists. */
  config: Config['slack'] & Pick<SlackAccessConfig, 'owners'>;
  /** The bot's identity; known once the adapter has started. */
  bot(): BotIdentity;
  directory: SlackDirectory;
  threads: FollowedThreads;
  push(event: InboundEvent): void;
  /** Queues a person's message; resolves once the agent has it stored (when it acknowledges events). */
  deliver(message: InboundMessage): Promise<void>;
  log: Logger;
}

/** Subtypes that are still a person saying something; edits, deletions, joins and the like are not. */
const SPOKEN_SUBTYPES = new Set(['file_share', 'thread_broadcast', 'me_message']);

/** How a message relates to the bot. */
interface Addressing {
  mentionsBot: boolean;
  replyToBot: boolean;
  subId?: string;
}

/** Turns message events into InboundMessages, once per message and in order per conversation. */
export class MessageIntake {
  private readonly seen = new RecentKeys();
  private readonly order = new SerialChains();
  private readonly latestThreads = new Map<string, string>();
  private readonly context: ThreadContext;

  constructor(private readonly deps: IntakeDeps) {
    this.context = new ThreadContext(deps.config.threadContextMessages);
  }

  /** Handles one event (already acknowledged to Slack). */
  handle(event: SlackMessageEvent, teamId: string | undefined): Promise<void> {
    return this.order.run(event.channel, () => this.process(event, teamId ?? event.team));
  }

  /** The thread of the channel where the bot was last addressed, for slash commands that carry none. */
  latestThread(channelId: string): string | undefined {
    return this.latestThreads.get(channelId);
  }

  private async process(event: SlackMessageEvent, teamId: string | undefined): Promise<void> {
    if (!this.isSpoken(event)) return;
    const kind = await chatKindOf(event.channel, event.channel_type, this.deps.directory);
    const origin = { teamId, channelId: event.channel, userId: event.user ?? event.bot_id ?? '', isDm: kind === 'dm' };
    if (!isAllowed(this.deps.config, origin)) {
      this.deps.log.debug({ channel: event.channel, user: origin.userId }, 'slack: event outside the allowlists ignored');
      return;
    }
    if (!this.seen.add(`${event.channel}:${event.ts}`)) return;
    const message = await this.toMessage(event, kind, teamId);
    if (kind === 'group' && !event.thread_ts) await this.handOverContext(message);
    await this.deps.deliver(message);
  }

  /** A top-level message is context for later threads, or starts a thread that gets that context. */
  private async handOverContext(message: InboundMessage): Promise<void> {
    if (!message.mentionsBot) {
      this.context.remember(message);
      return;
    }
    for (const earlier of this.context.handOver(message.chat.chatId, message.messageId)) await this.deps.deliver(earlier);
  }

  /** Whether the event is someone (not this bot, and a bot only when allowed) saying something. */
  private isSpoken(event: SlackMessageEvent): boolean {
    const bot = this.deps.bot();
    if (event.subtype && !SPOKEN_SUBTYPES.has(event.subtype) && event.subtype !== 'bot_message') return false;
    if (event.user === bot.userId || event.bot_id === bot.botId) return false;
    if (event.bot_id || event.subtype === 'bot_message') return this.deps.config.respondToBots;
    return Boolean(event.user);
  }

  private async toMessage(event: SlackMessageEvent, kind: ChatKind, teamId: string | undefined): Promise<InboundMessage> {
    const addressing = kind === 'dm' ? { mentionsBot: true, replyToBot: false, subId: event.thread_ts } : await this.addressing(event);
    const title = kind === 'group' ? await groupTitle(event.channel, this.deps.directory) : undefined;
    const directory = this.deps.directory;
    return {
      type: 'message',
      chat: chatInfoOf({ channelId: event.channel, kind, subId: addressing.subId, teamId, title }),
      sender: await this.senderOf(event),
      receivedAt: Date.now(),
      messageId: event.ts,
      text: await plainTextFromSlack(event.text ?? '', this.deps.bot().userId, (id) => directory.userName(id)),
      mentionsBot: addressing.mentionsBot,
      replyToBot: addressing.replyToBot,
      attachments: attachmentsOf(event),
    };
  }

  /** In a channel: addressed by @mention or in a followed thread; addressed messages start or join a thread. */
  private async addressing(event: SlackMessageEvent): Promise<Addressing> {
    const { config } = this.deps;
    const bot = this.deps.bot();
    const mentioned = event.type === 'app_mention' || mentionsUser(event.text ?? '', bot.userId);
    const followed = Boolean(event.thread_ts && config.followThreads && (await this.deps.threads.isFollowed(event.channel, event.thread_ts)));
    const replyToBot = event.parent_user_id === bot.userId || followed;
    if (!mentioned && !followed) return { mentionsBot: false, replyToBot, subId: event.thread_ts };
    const threadTs = event.thread_ts ?? event.ts;
    this.latestThreads.set(event.channel, threadTs);
    if (config.followThreads) await this.deps.threads.follow(event.channel, threadTs);
    return { mentionsBot: true, replyToBot, subId: threadTs };
  }

  private async senderOf(event: SlackMessageEvent): Promise<Sender> {
    if (event.bot_id && !event.user) {
      return { id: event.bot_id, name: event.bot_profile?.name ?? event.username ?? event.bot_id, isBot: true };
    }
    const id = event.user ?? '';
    const sender: Sender = { id, name: await this.deps.directory.userName(id) };
    if (event.bot_id) sender.isBot = true;
    return sender;
  }
}

/** The files shared with a message: their ids and `url_private`, fetched later with the bot token. */
function attachmentsOf(event: SlackMessageEvent): AttachmentMeta[] {
  return (event.files ?? []).map((file) => {
    const name = file.name ?? file.title ?? 'file';
    const meta: AttachmentMeta = { kind: attachmentKindOf(file.mimetype, name), name };
    if (file.mimetype) meta.mimeType = file.mimetype;
    if (file.size !== undefined) meta.sizeBytes = file.size;
    if (file.id) meta.fileId = file.id;
    if (file.url_private) meta.url = file.url_private;
    return meta;
  });
}
