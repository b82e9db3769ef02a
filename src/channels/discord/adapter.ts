/**
 * The Discord channel: a discord.js gateway client whose messages and
 * interactions are pushed, normalised, into one event stream, and whose
 * replies, edits, typing and approval prompts go out through REST.
 *
 * On one process, one client runs every gateway shard. In a cluster (an
 * election is given), the shards are shared out among the instances
 * (shard-duties.ts): each shard this instance holds runs a client of its own,
 * feeding the same event stream, and a client that is not on the gateway sends
 * for all of them, so that an instance holding no shard still sends.
 */
import type { APIApplicationCommandOption, Client, Interaction, Message, RepliableInteraction } from 'discord.js';
import { Events } from 'discord.js';
import { soleElection, type Election } from '../election.js';
import { AttachmentFetchError, ChannelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { openDmWarning, type Allowlists } from '../access.js';
import { approvalPromptText, approvalResolvedText } from '../approval-text.js';
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
import { isGuildAdmin } from './admin.js';
import { discordAllowlists, isAllowed } from './access.js';
import { guildIdOfScope } from './chat.js';
import { approvalButtons } from './approvals.js';
import { createDiscordClient, type DiscordConfig } from './client.js';
import { buildSlashCommands, registerCommands, type SlashCommand } from './commands.js';
import { connectClient } from './connect.js';
import { gatewayHealth } from './health.js';
import { toInboundMessage } from './inbound.js';
import { routeInteraction, type InteractionContext } from './interactions.js';
import { resolveDiscordOptions, type DiscordChannelOptions, type ResolvedDiscordOptions } from './options.js';
import { DISCORD_FILE_LIMITS, DiscordOutbound } from './outbound.js';
import { DISCORD_MESSAGE_LIMIT, renderParts } from './render.js';
import { InteractionResponder } from './responder.js';
import { applicationIdOf, shardCountOf } from './rest-login.js';
import { ShardDuties } from './shard-duties.js';

/** Discord's limits, for the agent's pacing. */
export const DISCORD_CAPABILITIES: ChannelCapabilities = {
  maxMessageLength: DISCORD_MESSAGE_LIMIT,
  // Discord allows about five edits per five seconds per channel.
  minEditIntervalMs: 1_000,
  // The typing indicator lasts ten seconds.
  typingIntervalMs: 8_000,
  fileLimits: DISCORD_FILE_LIMITS,
};

/**
 * Discord over the gateway (discord.js v14).
 * @example
 * const channel = new DiscordChannel(config.discord, deps);
 * await channel.start();
 * for await (const event of channel.events()) handle(event);
 */
export class DiscordChannel implements Channel {
  readonly name = 'discord';
  readonly capabilities = DISCORD_CAPABILITIES;
  /** On one process the gateway client; in a cluster, a client only for REST. */
  private readonly client: Client;
  /** In a cluster only: the election that shares the gateway shards out among the instances. */
  private readonly election: Election | undefined;
  private duties: ShardDuties | undefined;
  private readonly queue = new EventQueue<InboundEvent>();
  private readonly outbound: DiscordOutbound;
  private readonly log: Logger;
  private readonly commands: SlashCommand[];
  private readonly responders = new Set<InteractionResponder>();
  private readonly interactionContext: InteractionContext;
  private readonly allowlists: Allowlists;
  private readonly options: ResolvedDiscordOptions;
  private stopped = false;

  constructor(
    private readonly config: DiscordConfig,
    private readonly deps: ChannelDeps,
    options: DiscordChannelOptions = {},
  ) {
    this.log = deps.log.child({ channel: 'discord' });
    this.options = resolveDiscordOptions(options);
    this.election = deps.election === soleElection ? undefined : deps.election;
    this.client = createDiscordClient(config);
    this.outbound = new DiscordOutbound(this.client, this.log, this.election !== undefined);
    this.commands = buildSlashCommands(deps.commands, this.log);
    this.allowlists = discordAllowlists(config, this.options.owners);
    this.interactionContext = {
      allowlists: this.allowlists,
      commandOptions: new Map<string, readonly APIApplicationCommandOption[]>(
        this.commands.map((command) => [command.name, command.options ?? []]),
      ),
      commands: deps.commands,
      completions: (source) => deps.completions(source),
      responderFor: (interaction) => this.responderFor(interaction),
      emit: (event) => this.queue.push(event),
      log: this.log,
    };
    if (!this.election) this.listen(this.client);
  }

  /**
   * Connects to the gateway (in a cluster: checks the token and campaigns for
   * shards in the background), then registers the slash commands.
   */
  async start(): Promise<void> {
    const token = this.config.token;
    if (!token) throw new ChannelError('discord', 'no bot token configured (set DISCORD_BOT_TOKEN)');
    const applicationId = this.election ? await this.startShards(token, this.election) : await this.connect(token);
    const openDms = openDmWarning(this.allowlists);
    if (openDms) this.log.warn(openDms);
    if (applicationId) {
      await registerCommands(this.client.rest, applicationId, this.config.commandGuildIds, this.commands, this.log);
    }
  }

  /** Disconnects (in a cluster: gives the shards back) and ends the event stream. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const responder of this.responders) responder.dispose();
    this.responders.clear();
    await this.duties?.stop();
    await this.client.destroy();
    this.queue.close();
  }

  /** The gateway shards this instance runs: all of them on one process, its share in a cluster. */
  shards(): number[] {
    return this.duties ? this.duties.shards() : [...this.client.ws.shards.keys()];
  }

  /** Messages, slash commands and approval button presses, in arrival order. */
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }

  /** Sends markdown, split into parts of at most 2,000 characters. */
  send(chat: ChatAddress, text: string, options: SendOptions = {}): Promise<SentMessage> {
    return this.outbound.send(chat, renderParts(text), options);
  }

  /** Edits the parts of a sent message; extra parts are sent, surplus ones deleted. */
  edit(message: SentMessage, text: string): Promise<SentMessage> {
    return this.outbound.edit(message, renderParts(text));
  }

  /** Shows the typing indicator. */
  typing(chat: ChatAddress): Promise<void> {
    return this.outbound.typing(chat);
  }

  /** Sends the prompt with Approve / Always allow / Deny buttons under its last part. */
  sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    return this.outbound.send(chat, renderParts(approvalPromptText(prompt)), { lastComponents: approvalButtons(prompt) });
  }

  /** Rewrites the prompt with its outcome and removes the buttons. */
  async resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    await this.outbound.edit(message, renderParts(approvalResolvedText(prompt, outcome)), { lastComponents: [] });
  }

  /** Sends a file as a message with it attached; an image shows inline. */
  sendFile(chat: ChatAddress, file: OutboundFile, options: Pick<SendOptions, 'replyTo' | 'idempotencyKey'> = {}): Promise<SentMessage> {
    return this.outbound.sendFile(chat, file, options);
  }

  /** Administrator or Manage Server in the chat's guild; false in DMs. */
  isAdmin(chat: ChatInfo, userId: string): Promise<boolean> {
    return isGuildAdmin(this.client, chat, userId, this.log, this.election !== undefined);
  }

  /** Whether the allowlists still admit the person in this chat. */
  async admits(chat: ChatInfo, userId: string): Promise<boolean> {
    const guildId = chat.kind === 'group' ? (guildIdOfScope(chat.scope) ?? null) : null;
    return isAllowed(this.allowlists, { userId, guildId, channelId: chat.chatId });
  }

  /** Downloads a file of a message from its attachment URL (Discord's CDN; no credentials needed). */
  async fetchAttachment(attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array> {
    if (!attachment.url) throw new AttachmentFetchError('failed', 'the message names no file to download');
    try {
      return await downloadBytes(attachment.url, limits);
    } catch (error) {
      // An attachment's signed URL expires after about a day (a turn run again after a long stop, another
      // instance fetching it later): Discord signs it again on request.
      if (!(error instanceof AttachmentFetchError) || !/answered (403|404)$/.test(error.message)) throw error;
      const refreshed = await this.refreshedUrl(attachment.url).catch(() => undefined);
      if (!refreshed) throw error;
      return downloadBytes(refreshed, limits);
    }
  }

  /** A new signed URL for an attachment's expired one (`POST /attachments/refresh-urls`). */
  private async refreshedUrl(url: string): Promise<string | undefined> {
    const answer = (await this.client.rest.post('/attachments/refresh-urls', { body: { attachment_urls: [url] } })) as { refreshed_urls?: { original: string; refreshed: string }[] };
    return answer.refreshed_urls?.find((entry) => entry.original === url)?.refreshed;
  }

  /**
   * Ready while every gateway shard is ready (discord.js reconnects a silent
   * one itself); in a cluster, every shard this instance holds (none: standing by).
   */
  health(): ChannelHealth {
    if (this.stopped) return { ready: false, reason: 'discord: stopped' };
    if (this.election) return this.duties?.health() ?? { ready: false, reason: 'discord: not started' };
    return gatewayHealth(this.client);
  }

  /** Logs the one gateway client in; the application's id. */
  private async connect(token: string): Promise<string | undefined> {
    await connectClient(this.client, token, this.options.readyTimeoutMs);
    this.log.info({ user: this.client.user?.tag, guilds: this.client.guilds.cache.size }, 'connected to Discord');
    return this.client.application?.id ?? this.client.user?.id;
  }

  /** Checks the token over REST and campaigns for this instance's share of the shards; the application's id. */
  private async startShards(token: string, election: Election): Promise<string> {
    this.client.rest.setToken(token);
    const applicationId = await applicationIdOf(this.client.rest);
    const shardCount = await shardCountOf(this.client.rest, this.config.shardCount);
    const duties = new ShardDuties({
      election,
      log: this.log,
      shardCount,
      token,
      balanceEveryMs: this.options.balanceEveryMs,
      readyTimeoutMs: this.options.readyTimeoutMs,
      createClient: (id) => this.listen(createDiscordClient(this.config, { ids: [id], count: shardCount })),
    });
    this.duties = duties;
    await duties.start();
    return applicationId;
  }

  /** Feeds `client`'s messages and interactions to the event stream, and logs its gateway's changes. */
  private listen(client: Client): Client {
    client.on(Events.MessageCreate, (message) => this.onMessage(message));
    client.on(Events.InteractionCreate, (interaction) => this.onInteraction(interaction));
    client.on(Events.ShardReconnecting, (shardId) => this.log.info({ shardId }, 'gateway reconnecting'));
    client.on(Events.ShardResume, (shardId, replayed) => this.log.info({ shardId, replayed }, 'gateway resumed'));
    client.on(Events.ShardDisconnect, (event, shardId) => this.log.error({ shardId, code: event.code }, 'gateway closed for good'));
    client.on(Events.Warn, (message) => this.log.warn(message));
    client.on(Events.Error, (error) => this.log.error({ err: error }, 'discord client error'));
    return client;
  }

  private onMessage(message: Message): void {
    const botUserId = message.client.user?.id;
    if (!botUserId) return;
    try {
      const event = toInboundMessage(message, botUserId, this.config, this.allowlists);
      if (event) this.queue.push(event);
    } catch (error) {
      this.log.error({ err: error, messageId: message.id }, 'could not read a message');
    }
  }

  private onInteraction(interaction: Interaction): void {
    routeInteraction(interaction, this.interactionContext).catch((error: unknown) => {
      this.log.error({ err: error, interactionId: interaction.id }, 'could not handle an interaction');
    });
  }

  private responderFor(interaction: RepliableInteraction): InteractionResponder {
    for (const responder of this.responders) if (responder.settled) this.responders.delete(responder);
    const responder = new InteractionResponder(interaction, {
      deferAfterMs: this.options.deferAfterMs,
      deferredLifetimeMs: this.options.deferredReplyLifetimeMs,
      render: renderParts,
      log: this.log,
    });
    this.responders.add(responder);
    return responder;
  }
}
