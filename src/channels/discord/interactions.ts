/**
 * Turns interactions into inbound events: a slash command becomes an
 * InboundCommand, an approval button an InboundApprovalAnswer, each answered
 * through an InteractionResponder; autocomplete is answered here and never
 * reaches the agent.
 */
import {
  MessageFlags,
  type APIApplicationCommandOption,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Interaction,
  type RepliableInteraction,
} from 'discord.js';
import type { Logger } from '../../log.js';
import { NOT_AVAILABLE, type Allowlists } from '../access.js';
import { decodeApprovalPayload } from '../approval-payload.js';
import { STALE_BUTTON, type ChatInfo, type CommandSpec, type InboundEvent, type Sender } from '../types.js';
import { isAllowed } from './access.js';
import { chatInfoOf } from './chat.js';
import { answerAutocomplete, commandArgs } from './commands.js';
import type { InteractionResponder } from './responder.js';

/** What the router needs from the adapter. */
export interface InteractionContext {
  /** Who may use the bot; others are refused with the shared "not available" text. */
  allowlists: Allowlists;
  /** Options of each registered command, by name, to order arguments. */
  commandOptions: ReadonlyMap<string, readonly APIApplicationCommandOption[]>;
  /** The command table, to find an option's completion source. */
  commands: readonly CommandSpec[];
  /** Suggestions of a completion source (`tool`: the tool names). */
  completions(source: string): string[];
  /** Creates (and tracks) the responder of one interaction. */
  responderFor(interaction: RepliableInteraction): InteractionResponder;
  emit(event: InboundEvent): void;
  log: Logger;
}

/** Handles one interaction of any kind. */
export async function routeInteraction(interaction: Interaction, context: InteractionContext): Promise<void> {
  if (!isAllowed(context.allowlists, originOf(interaction))) return refuse(interaction);
  if (interaction.isAutocomplete()) return answerAutocomplete(interaction, context.commands, (source) => context.completions(source));
  if (interaction.isChatInputCommand()) return emitCommand(interaction, context);
  if (interaction.isButton()) return emitApprovalAnswer(interaction, context);
}

function emitCommand(interaction: ChatInputCommandInteraction, context: InteractionContext): void {
  const responder = context.responderFor(interaction);
  context.emit({
    type: 'command',
    chat: chatOf(interaction),
    sender: senderOf(interaction),
    receivedAt: Date.now(),
    name: interaction.commandName.toLowerCase(),
    args: commandArgs(interaction.options.data, context.commandOptions.get(interaction.commandName)),
    respond: (reply) => responder.respond(reply),
  });
}

async function emitApprovalAnswer(interaction: ButtonInteraction, context: InteractionContext): Promise<void> {
  const payload = decodeApprovalPayload(interaction.customId);
  if (!payload) {
    await interaction.reply({ content: STALE_BUTTON, flags: MessageFlags.Ephemeral });
    return;
  }
  const responder = context.responderFor(interaction);
  context.emit({
    type: 'approval',
    chat: chatOf(interaction),
    sender: senderOf(interaction),
    receivedAt: Date.now(),
    approvalId: payload.approvalId,
    action: payload.action,
    respond: (reply) => responder.respond(reply),
  });
}

async function refuse(interaction: Interaction): Promise<void> {
  if (interaction.isAutocomplete()) await interaction.respond([]);
  else if (interaction.isRepliable()) await interaction.reply({ content: NOT_AVAILABLE, flags: MessageFlags.Ephemeral });
}

function chatOf(interaction: Interaction): ChatInfo {
  const channel = interaction.channel;
  return chatInfoOf({
    channelId: interaction.channelId ?? '',
    guildId: interaction.guildId,
    channelName: channel && 'name' in channel ? channel.name : undefined,
    guildName: interaction.guild?.name,
  });
}

function senderOf(interaction: Interaction): Sender {
  const member = interaction.member;
  const name = member && 'displayName' in member ? member.displayName : interaction.user.displayName;
  return { id: interaction.user.id, name, isBot: interaction.user.bot };
}

function originOf(interaction: Interaction) {
  const channel = interaction.channel;
  return {
    userId: interaction.user.id,
    guildId: interaction.guildId,
    channelId: interaction.channelId ?? '',
    parentId: channel?.isThread() ? channel.parentId : null,
  };
}
