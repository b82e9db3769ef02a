/**
 * Slash commands: their definitions (built from the agent's command list, with
 * `/policy` as subcommands and a tool option that autocompletes), registration
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
import type { CommandSpec } from '../types.js';

/** A chat-input command as sent to Discord. */
export type SlashCommand = RESTPostAPIChatInputApplicationCommandsJSONBody;

/** Commands every pincer bot offers; the agent's own specs override their descriptions. */
const BUILT_IN: readonly CommandSpec[] = [
  { name: 'stop', description: 'Stop the running answer' },
  { name: 'new', description: 'Start a fresh conversation' },
  { name: 'status', description: 'Show the state of this conversation' },
  { name: 'tools', description: 'List the tools available here' },
  { name: 'usage', description: 'Show tokens and cost used today' },
  { name: 'policy', description: 'Manage the tool policy (admins)' },
  { name: 'help', description: 'List the commands' },
];

/** The `/policy` subcommands and what each does. */
const POLICY_ACTIONS: readonly [string, string][] = [
  ['list', 'Show the tool policy'],
  ['allow', 'Let a tool run without asking'],
  ['ask', 'Always ask before a tool runs'],
  ['disable', 'Remove a tool'],
  ['reset', 'Return a tool to its default'],
];

const NAME = /^[-_\p{Ll}\p{N}]{1,32}$/u;
const MAX_COMMANDS = 100;
const MAX_DESCRIPTION = 100;
const MAX_CHOICES = 25;

/** The slash commands for `specs` (plus the built-in ones), valid for Discord. */
export function buildSlashCommands(specs: readonly CommandSpec[], log: Logger): SlashCommand[] {
  const byName = new Map<string, CommandSpec>();
  for (const spec of [...BUILT_IN, ...specs]) {
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

/** Suggests tool names for the focused `tool` option, names starting with the input first. */
export async function answerAutocomplete(interaction: AutocompleteInteraction, toolNames: readonly string[]): Promise<void> {
  const focused = interaction.options.getFocused(true);
  const query = String(focused.value).toLowerCase();
  const names = focused.name === 'tool' ? toolNames.filter((name) => name.toLowerCase().includes(query)) : [];
  names.sort((a, b) => Number(!a.toLowerCase().startsWith(query)) - Number(!b.toLowerCase().startsWith(query)) || a.localeCompare(b));
  await interaction.respond(names.slice(0, MAX_CHOICES).map((name) => ({ name, value: name })));
}

function toSlashCommand(spec: CommandSpec): SlashCommand {
  const base = { type: ApplicationCommandType.ChatInput as const, name: spec.name, description: clip(spec.description) };
  if (spec.name === 'policy') return { ...base, options: policyOptions() };
  return { ...base, options: spec.usage ? [argsOption(spec.usage)] : [] };
}

function policyOptions(): APIApplicationCommandOption[] {
  return POLICY_ACTIONS.map(([name, description]) => ({
    type: ApplicationCommandOptionType.Subcommand,
    name,
    description,
    options: name === 'list' ? [scopeOption()] : [toolOption(), scopeOption()],
  }));
}

function toolOption(): APIApplicationCommandBasicOption {
  return { type: ApplicationCommandOptionType.String, name: 'tool', description: 'Tool name', required: true, autocomplete: true };
}

function scopeOption(): APIApplicationCommandBasicOption {
  return {
    type: ApplicationCommandOptionType.String,
    name: 'scope',
    description: 'Where the policy applies (default: here)',
    required: false,
    choices: [
      { name: 'here', value: 'here' },
      { name: 'global', value: 'global' },
    ],
  };
}

function argsOption(usage: string): APIApplicationCommandBasicOption {
  return { type: ApplicationCommandOptionType.String, name: 'args', description: clip(usage), required: false };
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
