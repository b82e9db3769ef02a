/**
 * The Discord channel: a discord.js gateway client whose messages and
 * interactions are pushed, normalised, into one event stream, and whose
 * replies, edits, typing and approval prompts go out through REST.
 */
import type { APIApplicationCommandOption, Client, Interaction, Message, RepliableInteraction } from 'discord.js';
import { Events } from 'discord.js';
import { ChannelError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { openDmWarning, type Allowlists } from '../access.js';
import { approvalPromptText, approvalResolvedText } from '../approval-text.js';
import { EventQueue } from '../event-queue.js';
import type {
  ApprovalOutcome,
  ApprovalPrompt,
  Channel,
  ChannelCapabilities,
  ChannelDeps,
  ChannelHealth,
  ChatAddress,
  ChatInfo,
  InboundEvent,
  SentMessage,
} from '../types.js';
import { isGuildAdmin } from './admin.js';
import { discordAllowlists } from './access.js';
import { approvalButtons } from './approvals.js';
import { createDiscordClient, type DiscordConfig } from './client.js';
import { buildSlashCommands, registerCommands, type SlashCommand } from './commands.js';
import { connectClient } from './connect.js';
import { gatewayHealth } from './health.js';
import { toInboundMessage } from './inbound.js';
import { routeInteraction, type InteractionContext } from './interactions.js';
import { resolveDiscordOptions, type DiscordChannelOptions, type ResolvedDiscordOptions } from './options.js';
import { DiscordOutbound } from './outbound.js';
import { DISCORD_MESSAGE_LIMIT, renderParts } from './render.js';
import { InteractionResponder } from './responder.js';

/** Discord's limits, for the agent's pacing. */
export const DISCORD_CAPABILITIES: ChannelCapabilities = {
  maxMessageLength: DISCORD_MESSAGE_LIMIT,
  // Discord allows about five edits per five seconds per channel.
  minEditIntervalMs: 1_000,
  // The typing indicator lasts ten seconds.
  typingIntervalMs: 8_000,
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
  private readonly client: Client;
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
    this.client = createDiscordClient(config);
    this.outbound = new DiscordOutbound(this.client, this.log);
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
    this.listen();
  }

  /** Connects to the gateway, then registers the slash commands. */
  async start(): Promise<void> {
    const token = this.config.token;
    if (!token) throw new ChannelError('discord', 'no bot token configured (set DISCORD_BOT_TOKEN)');
    await connectClient(this.client, token, this.options.readyTimeoutMs);
    this.log.info({ user: this.client.user?.tag, guilds: this.client.guilds.cache.size }, 'connected to Discord');
    const openDms = openDmWarning(this.allowlists);
    if (openDms) this.log.warn(openDms);
    const applicationId = this.client.application?.id ?? this.client.user?.id;
    if (applicationId) {
      await registerCommands(this.client.rest, applicationId, this.config.commandGuildIds, this.commands, this.log);
    }
  }

  /** Disconnects and ends the event stream. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const responder of this.responders) responder.dispose();
    this.responders.clear();
    await this.client.destroy();
    this.queue.close();
  }

  /** Messages, slash commands and approval button presses, in arrival order. */
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }

  /** Sends markdown, split into parts of at most 2,000 characters. */
  send(chat: ChatAddress, text: string, options?: { replyTo?: string }): Promise<SentMessage> {
    return this.outbound.send(chat, renderParts(text), { replyTo: options?.replyTo });
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

  /** Administrator or Manage Server in the chat's guild; false in DMs. */
  isAdmin(chat: ChatInfo, userId: string): Promise<boolean> {
    return isGuildAdmin(this.client, chat, userId, this.log);
  }

  /** Ready while every gateway shard is ready (discord.js reconnects a silent one itself). */
  health(): ChannelHealth {
    if (this.stopped) return { ready: false, reason: 'discord: stopped' };
    return gatewayHealth(this.client);
  }

  private listen(): void {
    this.client.on(Events.MessageCreate, (message) => this.onMessage(message));
    this.client.on(Events.InteractionCreate, (interaction) => this.onInteraction(interaction));
    this.client.on(Events.ShardReconnecting, (shardId) => this.log.info({ shardId }, 'gateway reconnecting'));
    this.client.on(Events.ShardResume, (shardId, replayed) => this.log.info({ shardId, replayed }, 'gateway resumed'));
    this.client.on(Events.ShardDisconnect, (event, shardId) =>
      this.log.error({ shardId, code: event.code }, 'gateway closed for good'),
    );
    this.client.on(Events.Warn, (message) => this.log.warn(message));
    this.client.on(Events.Error, (error) => this.log.error({ err: error }, 'discord client error'));
  }

  private onMessage(message: Message): void {
    const botUserId = this.client.user?.id;
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
