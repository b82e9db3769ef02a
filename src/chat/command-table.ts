/**
 * The table of the chat commands (SPEC section 7), joined by the features'
 * commands (jobs, routines, MCP): help, parsing and every platform's
 * registration (Telegram's menu, Discord's slash commands, Slack's `/pincer`)
 * come from it.
 */
import { findCommand, type CommandArg } from '../channels/command-grammar.js';
import type { CommandSpec, InboundCommand, InboundMessage } from '../channels/types.js';

/** Where a policy change applies: this group, or everywhere. */
const SCOPE_ARG: CommandArg = { name: 'scope', description: 'Where the policy applies (default: here)', kind: 'choice', choices: ['here', 'global'] };
/** A tool, suggested from the registry's names. */
const TOOL_ARG: CommandArg = { name: 'tool', description: 'Tool name', kind: 'word', complete: 'tool', required: true };

/** The chat application's own commands (SPEC section 7); the features' join them in {@link commandTable}. */
export const CHAT_COMMANDS: CommandSpec[] = [
  { name: 'stop', description: 'Stop the running turn', aliases: ['interrupt'] },
  { name: 'new', description: 'Start a fresh conversation in this chat', aliases: ['reset'] },
  { name: 'status', description: 'What the bot is doing here, and this thread\'s usage' },
  { name: 'tools', description: 'Tools available here and whether they ask first' },
  { name: 'usage', description: 'Tokens and cost today' },
  {
    name: 'model',
    description: 'The models this bot has, and which one this conversation uses',
    defaultSub: 'list',
    subcommands: [
      { name: 'list', description: 'List the configured models' },
      {
        name: 'use',
        description: 'Switch this conversation to a model (admins in groups)',
        args: [{ name: 'name', description: 'Model name', kind: 'word', complete: 'model', required: true }],
      },
    ],
  },
  {
    name: 'policy',
    description: 'Admin tool policy',
    who: 'admin',
    defaultSub: 'list',
    subcommands: [
      { name: 'list', description: 'Show the tool policy', args: [SCOPE_ARG] },
      { name: 'allow', description: 'Let a tool run without asking', args: [TOOL_ARG, SCOPE_ARG] },
      { name: 'ask', description: 'Always ask before a tool runs', args: [TOOL_ARG, SCOPE_ARG] },
      { name: 'disable', description: 'Remove a tool', args: [TOOL_ARG, SCOPE_ARG] },
      { name: 'reset', description: 'Return a tool to its default', args: [TOOL_ARG, SCOPE_ARG] },
    ],
  },
  {
    name: 'permissions',
    description: 'Your own tool choices (Always allow), and resetting them',
    defaultSub: 'list',
    subcommands: [
      { name: 'list', description: 'Show the tools you set to Always allow or disabled' },
      {
        name: 'reset',
        description: 'Forget your choice for a tool, or for all (they ask first again)',
        args: [{ name: 'tool', description: 'Tool name, or all', kind: 'word', complete: 'tool', required: true }],
      },
    ],
  },
  { name: 'help', description: 'List the commands', aliases: ['start'] },
  { name: 'shutdown', description: 'Shut the bot down (owners)', who: 'owner' },
];

/**
 * Every command pincer knows, the features' before help and shutdown: help,
 * parsing and every platform's registration come from this table.
 */
export function commandTable(features: readonly CommandSpec[]): CommandSpec[] {
  const at = CHAT_COMMANDS.findIndex((command) => command.name === 'help');
  return [...CHAT_COMMANDS.slice(0, at), ...features, ...CHAT_COMMANDS.slice(at)];
}

/** A text message that is a command (`/stop`, `/policy list`) of `commands`, as a command event. */
export function textCommand(event: InboundMessage, commands: readonly CommandSpec[]): InboundCommand | undefined {
  const match = /^\/([A-Za-z][\w-]{0,31})(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(event.text.trim());
  if (!match) return undefined;
  const name = match[1]!.toLowerCase();
  const addressed = event.chat.kind === 'dm' || event.mentionsBot || event.replyToBot;
  if (!findCommand(commands, name) && !addressed) return undefined;
  return {
    type: 'command',
    chat: event.chat,
    sender: event.sender,
    receivedAt: event.receivedAt,
    name,
    args: (match[2] ?? '').trim(),
    messageId: event.messageId,
  };
}
