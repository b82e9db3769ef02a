/**
 * Slash commands: their definitions, rendered from the command grammar
 * (subcommands, typed options, choices, options that autocomplete), registration
 * through REST, and turning an invocation back into the agent's `name args`.
 */
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  Routes,
  type APIApplicationCommandBasicOption,
  type APIApplicationCommandOption,
  type AutocompleteInteraction,
  type CommandInteractionOption,
  type REST,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import type { Logger } from '../../log.js';
import { findArg, findCommand, type CommandArg, type CommandSpec } from '../command-grammar.js';

/** A chat-input command as sent to Discord. */
export type SlashCommand = RESTPostAPIChatInputApplicationCommandsJSONBody;

const NAME = /^[-_\p{Ll}\p{N}]{1,32}$/u;
const MAX_COMMANDS = 100;
const MAX_DESCRIPTION = 100;
const MAX_CHOICES = 25;

/** The slash commands for `specs`, valid for Discord. */
export function buildSlashCommands(specs: readonly CommandSpec[], log: Logger): SlashCommand[] {
  const byName = new Map<string, CommandSpec>();
  for (const spec of specs) {
    const name = spec.name.toLowerCase();
    if (NAME.test(name)) byName.set(name, { ...spec, name });
    else log.warn({ command: spec.name }, 'command name is not valid for Discord; not registered');
  }
  return [...byName.values()].slice(0, MAX_COMMANDS).map(toSlashCommand);
}

/**
 * Registers `commands` per guild when guild ids are configured (visible at
 * once, for testing), else globally (every guild and DMs; Discord may take a
 * while to show changes). A failure is logged: text commands still work.
 */
export async function registerCommands(
  rest: REST,
  applicationId: string,
  guildIds: readonly string[],
  commands: SlashCommand[],
  log: Logger,
): Promise<void> {
  const targets = guildIds.length
    ? guildIds.map((guildId) => ({ where: `guild ${guildId}`, route: Routes.applicationGuildCommands(applicationId, guildId), body: commands }))
    : [{ where: 'global', route: Routes.applicationCommands(applicationId), body: commands.map(usableInDms) }];
  for (const target of targets) {
    try {
      await rest.put(target.route, { body: target.body });
      log.info({ where: target.where, count: commands.length }, 'slash commands registered');
    } catch (error) {
      log.error({ err: error, where: target.where }, 'could not register slash commands');
    }
  }
}

/**
 * The argument text of an invocation, in definition order: `/policy allow
 * tool:http_fetch scope:global` gives `allow http_fetch global`.
 */
export function commandArgs(given: readonly CommandInteractionOption[], defined: readonly APIApplicationCommandOption[] = []): string {
  const sub = given.find((option) => option.options !== undefined || isSubcommand(option.type));
  if (sub) {
    const definition = defined.find((option) => option.name === sub.name);
    const nested = definition && 'options' in definition ? (definition.options ?? []) : [];
    return [sub.name, commandArgs(sub.options ?? [], nested)].filter(Boolean).join(' ');
  }
  const order = defined.map((option) => option.name);
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  return [...given]
    .sort((a, b) => rank(a.name) - rank(b.name))
    .map((option) => option.value)
    .filter((value) => value !== undefined && value !== null && value !== '')
    .join(' ');
}

/**
 * Suggests values for the focused option from its argument's completion source
 * (`tool`: the tool names), those starting with the input first.
 */
export async function answerAutocomplete(
  interaction: AutocompleteInteraction,
  specs: readonly CommandSpec[],
  completions: (source: string) => readonly string[],
): Promise<void> {
  const focused = interaction.options.getFocused(true);
  const query = String(focused.value).toLowerCase();
  const spec = findCommand(specs, interaction.commandName);
  const sub = interaction.options.getSubcommand(false) ?? undefined;
  const source = spec ? findArg(spec, focused.name, sub)?.complete : undefined;
  const names = source ? completions(source).filter((name) => name.toLowerCase().includes(query)) : [];
  names.sort((a, b) => Number(!a.toLowerCase().startsWith(query)) - Number(!b.toLowerCase().startsWith(query)) || a.localeCompare(b));
  await interaction.respond(names.slice(0, MAX_CHOICES).map((name) => ({ name, value: name })));
}

function toSlashCommand(spec: CommandSpec): SlashCommand {
  const base = { type: ApplicationCommandType.ChatInput as const, name: spec.name, description: clip(spec.description) };
  if (spec.subcommands?.length) {
    const options: APIApplicationCommandOption[] = spec.subcommands.map((sub) => ({
      type: ApplicationCommandOptionType.Subcommand,
      name: sub.name,
      description: clip(sub.description),
      options: (sub.args ?? []).map(toOption),
    }));
    return { ...base, options };
  }
  return { ...base, options: (spec.args ?? []).map(toOption) };
}

/** One argument as an option: a number for integers, fixed choices, or suggestions as the user types. */
function toOption(arg: CommandArg): APIApplicationCommandBasicOption {
  const common = { name: arg.name, description: clip(arg.description), required: arg.required ?? false };
  if (arg.kind === 'integer') return { ...common, type: ApplicationCommandOptionType.Integer };
  if (arg.kind === 'choice' && arg.choices) {
    return { ...common, type: ApplicationCommandOptionType.String, choices: arg.choices.slice(0, MAX_CHOICES).map((value) => ({ name: value, value })) };
  }
  return { ...common, type: ApplicationCommandOptionType.String, ...(arg.complete ? { autocomplete: true } : {}) };
}

/** Global commands are usable in guilds and in DMs with the bot. */
function usableInDms(command: SlashCommand): SlashCommand {
  return {
    ...command,
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    integration_types: [ApplicationIntegrationType.GuildInstall],
  };
}

function isSubcommand(type: ApplicationCommandOptionType): boolean {
  return type === ApplicationCommandOptionType.Subcommand || type === ApplicationCommandOptionType.SubcommandGroup;
}

function clip(text: string): string {
  const trimmed = text.trim() || 'No description';
  return trimmed.length <= MAX_DESCRIPTION ? trimmed : `${trimmed.slice(0, MAX_DESCRIPTION - 1)}…`;
}
