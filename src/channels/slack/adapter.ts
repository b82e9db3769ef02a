/**
 * The Slack channel: Bolt on Socket Mode (or HTTP), fulfilling the Channel
 * contract. It only moves events and messages; the agent decides what to say.
 *
 * - inbound: `message`, `app_mention`, the slash command and approval button
 *   presses, each acknowledged at once and pushed onto one event queue;
 * - outbound: markdown rendered to mrkdwn and split into section-sized parts,
 *   approval prompts as Block Kit buttons, retries by the Web API client.
 */
import { webApi } from '@slack/bolt';
import type { Config } from '../../config/schema.js';
import { AttachmentFetchError, ChannelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { openDmWarning } from '../access.js';
import { downloadBytes } from '../download.js';
import { EventQueue } from '../event-queue.js';
import type {
  ApprovalOutcome,
  AttachmentMeta,
  FetchLimits,
  ApprovalPrompt,
  Channel,
  ChannelCapabilities,
  ChannelDeps,
  ChannelHealth,
  ChatAddress,
  ChatInfo,
  InboundEvent,
  OutboundFile,
  SendOptions,
  SentMessage,
} from '../types.js';
import { isAllowed, slackAllowlists } from './access.js';
import { ApprovalPressIntake } from './approval-press.js';
import { SECTION_TEXT_LIMIT } from './blocks.js';
import { boltLogger } from './bolt-logger.js';
import { SLACK } from './chat.js';
import { assertCredentials, createConnection, type SlackConnection } from './connection.js';
import { SlackDirectory } from './directory.js';
import { FollowedThreads } from './followed-threads.js';
import { MessageIntake, type IntakeDeps } from './inbound.js';
import { registerListeners } from './listeners.js';
import { resolveSlackOptions, type ResolvedSlackOptions, type SlackChannelOptions } from './options.js';
import { SLACK_FILE_LIMITS, SlackOutbound } from './outbound.js';

export type { SlackChannelOptions } from './options.js';
import { SlashCommandIntake } from './slash-command.js';
import { SlackWebApi, webClientOptions, type BotIdentity } from './web-api.js';

/** Slack allows about one `chat.update` per second per conversation before it rate-limits. */
/**
 * The longest the acknowledgement of a message's envelope waits for the agent to
 * store it: within Slack's 3 s, after which Slack sends it again anyway.
 */
const ACK_TIMEOUT_MS = 2_500;

const CAPABILITIES: ChannelCapabilities = {
  maxMessageLength: SECTION_TEXT_LIMIT,
  minEditIntervalMs: 1_200,
  // Slack has no typing indicator for bots outside assistant threads; the agent shows status by message.
  typingIntervalMs: 0,
  fileLimits: SLACK_FILE_LIMITS,
};

/**
 * pincer on Slack.
 * @example
 * const slack = new SlackChannel(config.slack, deps);
 * await slack.start();
 * for await (const event of slack.events()) { ... }
 */
export class SlackChannel implements Channel {
  readonly name = SLACK;
  readonly capabilities = CAPABILITIES;

  private readonly queue = new EventQueue<InboundEvent>();
  private readonly log: Logger;
  private readonly clientOptions: webApi.WebClientOptions;
  private readonly api: SlackWebApi;
  private readonly directory: SlackDirectory;
  private readonly outbound: SlackOutbound;
  private readonly options: ResolvedSlackOptions;
  private identity: BotIdentity | undefined;
  private connection: SlackConnection | undefined;

  /** @throws ConfigError when a token the configured mode needs is missing */
  constructor(
    private readonly config: Config['slack'],
    private readonly deps: ChannelDeps,
    options: SlackChannelOptions = {},
  ) {
    assertCredentials(config);
    this.options = resolveSlackOptions(options);
    this.log = deps.log.child({ channel: SLACK });
    const logger = boltLogger(this.log);
    this.clientOptions = webClientOptions(config.apiUrl, this.options.clientRetries, logger);
    this.api = new SlackWebApi(new webApi.WebClient(config.botToken, this.clientOptions));
    const lookupOptions = webClientOptions(config.apiUrl, this.options.lookupRetries, logger);
    this.directory = new SlackDirectory(new SlackWebApi(new webApi.WebClient(config.botToken, lookupOptions)), this.log);
    this.outbound = new SlackOutbound(this.api, this.log);
  }

  /** Identifies the bot (auth.test), then connects; resolves once events can flow. */
  async start(): Promise<void> {
    if (this.connection) return;
    const bot = await this.api.authTest();
    this.identity = bot;
    const connection = createConnection({
      config: this.config,
      bot,
      clientOptions: this.clientOptions,
      logger: boltLogger(this.log),
      ...(this.options.httpHost ? { httpHost: this.options.httpHost } : {}),
    });
    this.register(connection);
    try {
      await connection.start();
    } catch (error) {
      throw new ChannelError(SLACK, `could not connect (${this.config.mode} mode): ${(error as Error).message}`, true, { cause: error });
    }
    this.connection = connection;
    this.log.info({ mode: this.config.mode, team: bot.teamId, port: connection.port }, 'slack connected');
    const openDms = openDmWarning(slackAllowlists({ ...this.config, owners: this.options.owners }));
    if (openDms) this.log.warn(`slack: ${openDms}`);
  }

  /** Disconnects and ends the event stream. */
  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    try {
      await connection?.stop();
    } catch (error) {
      this.log.warn({ err: error }, 'slack: error while disconnecting');
    } finally {
      this.queue.close();
    }
  }

  /** Whether Slack reaches the bot: the socket connected (Socket Mode), or the server listening (HTTP). */
  /**
   * Downloads a file of a message from its `url_private`, with the bot token
   * as a bearer header (the app needs the `files:read` scope). Slack may
   * redirect to another host: the header is not sent there.
   */
  async fetchAttachment(attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array> {
    if (!attachment.url) throw new AttachmentFetchError('failed', 'the message names no file to download');
    // The bot token goes to Slack's own file host only (or the configured API's, a self-hosted test server).
    if (!slackFileHost(attachment.url, this.config.apiUrl)) throw new AttachmentFetchError('failed', 'the file is not on a Slack address');
    return downloadBytes(attachment.url, {
      ...limits,
      credentials: { authorization: `Bearer ${this.config.botToken ?? ''}` },
      htmlMeans: 'Slack answered its sign-in page instead of the file (does the app have the files:read scope?)',
    });
  }

  health(): ChannelHealth {
    return this.connection?.health() ?? { ready: false, reason: 'slack: not connected' };
  }

  /** The HTTP port listened on, in HTTP mode once started. */
  get listeningPort(): number | undefined {
    return this.connection?.port;
  }

  /** Messages, commands and button presses, in arrival order per conversation. */
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }

  /**
   * Posts in the conversation, inside its thread when it has one. `replyTo` is not used: on
   * Slack a reply is a thread, and the address already names it.
   */
  send(chat: ChatAddress, text: string, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.send(chat, text, options);
  }

  /** Updates the parts in place (chat.update), posting extra parts and blanking surplus ones. */
  edit(message: SentMessage, text: string): Promise<SentMessage> {
    return this.outbound.edit(message, text);
  }

  /** Nothing to do: bots have no typing indicator on Slack (capabilities.typingIntervalMs is 0). */
  async typing(_chat: ChatAddress): Promise<void> {}

  /** Posts the prompt with Block Kit buttons whose payloads carry only the approval id and action. */
  sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    return this.outbound.sendApproval(chat, prompt);
  }

  /** Rewrites the prompt to its outcome, without the buttons. */
  resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    return this.outbound.resolveApproval(message, prompt, outcome);
  }

  /** Shares a file into the conversation (files.uploadV2), in its thread when it has one. */
  sendFile(chat: ChatAddress, file: OutboundFile): Promise<SentMessage> {
    return this.outbound.sendFile(chat, file);
  }

  /** Workspace admins and owners (from users.info, cached five minutes); nobody in a DM. */
  async isAdmin(chat: ChatInfo, userId: string): Promise<boolean> {
    if (chat.kind === 'dm') return false;
    return this.directory.isAdmin(userId);
  }

  /** Whether the allowlists still admit the person in this chat. */
  async admits(chat: ChatInfo, userId: string): Promise<boolean> {
    const teamId = /^slack:team:(.+)$/.exec(chat.scope)?.[1];
    return isAllowed({ ...this.config, owners: this.options.owners }, { channelId: chat.chatId, userId, isDm: chat.kind === 'dm', ...(teamId ? { teamId } : {}) });
  }

  private register(connection: SlackConnection): void {
    const intake: IntakeDeps = {
      config: { ...this.config, owners: this.options.owners },
      bot: () => this.bot(),
      directory: this.directory,
      threads: new FollowedThreads(this.deps.state, this.log),
      push: (event) => this.queue.push(event),
      deliver: (message) => {
        if (this.deps.acknowledges) return this.queue.pushAcknowledged(message, ACK_TIMEOUT_MS);
        this.queue.push(message);
        return Promise.resolve();
      },
      log: this.log,
    };
    const messages = new MessageIntake(intake);
    const commands = new SlashCommandIntake({
      ...intake,
      latestThread: (channelId) => messages.latestThread(channelId),
    });
    const presses = new ApprovalPressIntake({ ...intake, api: this.api });
    registerListeners(connection.app, { messages, commands, presses, slashCommand: this.config.slashCommand, log: this.log });
  }

  private bot(): BotIdentity {
    if (!this.identity) throw new ChannelError(SLACK, 'not started');
    return this.identity;
  }
}

/** Whether `url` is on Slack's hosts (`slack.com` and its subdomains, over https), or on the configured API's host. */
export function slackFileHost(url: string, apiUrl: string | undefined): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (apiUrl && parsed.host === new URL(apiUrl).host) return true;
  return parsed.protocol === 'https:' && (parsed.hostname === 'slack.com' || parsed.hostname.endsWith('.slack.com'));
}
