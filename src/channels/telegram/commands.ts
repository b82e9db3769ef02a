/**
 * Registers pincer's commands with Telegram (setMyCommands) so that clients
 * offer them when a user types `/`: in private chats and in groups, where the
 * admin-only ones are listed too because group admins use them there.
 */
import type { Api } from 'grammy';
import type { BotCommand } from 'grammy/types';
import { argumentUsage, type CommandSpec } from '../command-grammar.js';

/** Telegram's rule for command names. */
const VALID_NAME = /^[a-z0-9_]{1,32}$/;
/** Telegram's limit on a command description. */
const DESCRIPTION_LIMIT = 256;

/** The specs as Telegram bot commands: lower-case names, descriptions within limits, invalid names left out. */
export function toBotCommands(specs: readonly CommandSpec[]): BotCommand[] {
  const seen = new Set<string>();
  const commands: BotCommand[] = [];
  for (const spec of specs) {
    const command = spec.name.replace(/^\//, '').toLowerCase();
    if (!VALID_NAME.test(command) || seen.has(command)) continue;
    seen.add(command);
    commands.push({ command, description: describe(spec) });
  }
  return commands;
}

function describe(spec: CommandSpec): string {
  const usage = argumentUsage(spec);
  const text = usage ? `${spec.description} (${usage})` : spec.description;
  const trimmed = text.trim() || spec.name;
  return trimmed.length <= DESCRIPTION_LIMIT ? trimmed : `${trimmed.slice(0, DESCRIPTION_LIMIT - 1)}…`;
}

/** Sets the command menus for all private chats and all group chats. */
export async function registerCommands(api: Api, specs: readonly CommandSpec[]): Promise<void> {
  const commands = toBotCommands(specs);
  await api.setMyCommands(commands, { scope: { type: 'all_private_chats' } });
  await api.setMyCommands(commands, { scope: { type: 'all_group_chats' } });
}
