/**
 * The table of every chat command (SPEC section 7 and the commands of jobs,
 * routines, models and MCP): help, parsing and every platform's registration
 * (Telegram's menu, Discord's slash commands, Slack's `/pincer`) come from it.
 */
import { findCommand, type CommandArg } from '../channels/command-grammar.js';
import type { CommandSpec, InboundCommand, InboundMessage } from '../channels/types.js';

/** Where a policy change applies: this group, or everywhere. */
const SCOPE_ARG: CommandArg = { name: 'scope', description: 'Where the policy applies (default: here)', kind: 'choice', choices: ['here', 'global'] };
/** A tool, suggested from the registry's names. */
const TOOL_ARG: CommandArg = { name: 'tool', description: 'Tool name', kind: 'word', complete: 'tool', required: true };

/** A background job's id. */
const JOB_ARG: CommandArg = { name: 'id', description: 'Job id (from /jobs)', kind: 'word', required: true };

/** A routine's id. */
const ROUTINE_ARG: CommandArg = { name: 'id', description: 'Routine id (from /routines)', kind: 'word', required: true };

/** Every command pincer knows: help, parsing and every platform's registration come from this table. */
export const COMMANDS: CommandSpec[] = [
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
  {
    name: 'jobs',
    description: 'Your background jobs (admins: every job here)',
    defaultSub: 'list',
    subcommands: [
      { name: 'list', description: 'List the jobs' },
      { name: 'show', description: 'Show one job', args: [JOB_ARG] },
      { name: 'cancel', description: 'Cancel a job that has not ended', args: [JOB_ARG] },
      { name: 'retry', description: 'Run an ended job again', args: [JOB_ARG] },
    ],
  },
  {
    name: 'routines',
    description: 'Your reminders and scheduled work (admins: every routine here)',
    defaultSub: 'list',
    subcommands: [
      { name: 'list', description: 'List the routines with their next firing' },
      { name: 'pause', description: 'Stop a routine from firing', args: [ROUTINE_ARG] },
      { name: 'resume', description: 'Let a paused routine fire again', args: [ROUTINE_ARG] },
      { name: 'delete', description: 'Delete a routine', args: [ROUTINE_ARG] },
      { name: 'run', description: 'Run a routine now, once', args: [ROUTINE_ARG] },
    ],
  },
  { name: 'mcp', description: 'The MCP tool servers: state, transport, tools, last error (admins)', who: 'admin' },
  { name: 'help', description: 'List the commands', aliases: ['start'] },
  { name: 'shutdown', description: 'Shut the bot down (owners)', who: 'owner' },
];

/** The canonical name of a command, or undefined when unknown. */
export function canonicalCommand(name: string): string | undefined {
  return findCommand(COMMANDS, name)?.name;
}

/** A text message that is a command (`/stop`, `/policy list`), as a command event. */
export function textCommand(event: InboundMessage): InboundCommand | undefined {
  const match = /^\/([A-Za-z][\w-]{0,31})(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(event.text.trim());
  if (!match) return undefined;
  const name = match[1]!.toLowerCase();
  const addressed = event.chat.kind === 'dm' || event.mentionsBot || event.replyToBot;
  if (!canonicalCommand(name) && !addressed) return undefined;
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
