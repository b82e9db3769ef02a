/**
 * The one grammar of pincer's commands: each command's subcommands and typed
 * arguments, who may run it, and one parser. Telegram's command menu, Discord's
 * slash commands (options, choices, autocomplete), Slack's `/pincer`, the
 * terminal and `/help` are all rendered from the same table.
 */

/** What an argument holds. `text` takes the rest of the line. */
export type ArgKind = 'word' | 'text' | 'integer' | 'choice';

/** One argument of a command or subcommand. */
export interface CommandArg {
  name: string;
  description: string;
  kind: ArgKind;
  /** The values of a `choice`. An optional choice is recognised wherever it stands. */
  choices?: readonly string[];
  /** A named source of suggestions (`tool`: the tool names) for platforms that autocomplete. */
  complete?: string;
  required?: boolean;
}

/** A subcommand (`/policy allow ...`). */
export interface CommandSub {
  name: string;
  description: string;
  args?: readonly CommandArg[];
}

/** Who may run a command: the platform's own checks come on top (group admins). */
export type CommandRole = 'everyone' | 'admin' | 'owner';

/** A command as the agent defines it and every platform renders it. */
export interface CommandSpec {
  name: string;
  description: string;
  args?: readonly CommandArg[];
  subcommands?: readonly CommandSub[];
  /** The subcommand run when none is given. */
  defaultSub?: string;
  /** Default `everyone`. */
  who?: CommandRole;
  /** Other names accepted for it. */
  aliases?: readonly string[];
}

/** Parsed arguments: by name, plus the subcommand. */
export interface ParsedCommand {
  sub?: string;
  args: Record<string, string | number>;
}

/** The result of parsing a command's argument text. */
export type ParseResult = { ok: true; value: ParsedCommand } | { ok: false; error: string };

/**
 * Parses `text` (what follows the command name) by `spec`. Words are split on
 * whitespace; choices match case-insensitively and are returned in lower case.
 *
 * @example
 * parseCommand(POLICY, 'allow http_fetch global') // { ok: true, value: { sub: 'allow', args: { tool: 'http_fetch', scope: 'global' } } }
 */
export function parseCommand(spec: CommandSpec, text: string): ParseResult {
  const words: Word[] = [...text.matchAll(/\S+/g)].map((match) => ({ text: match[0], at: match.index }));
  let sub: CommandSub | undefined;
  if (spec.subcommands?.length) {
    const name = (words[0]?.text ?? spec.defaultSub ?? '').toLowerCase();
    sub = spec.subcommands.find((candidate) => candidate.name === name);
    if (!sub) return { ok: false, error: `Usage: ${commandUsage(spec)}` };
    if (words.length) words.shift();
  }
  const args = parseArgs(sub?.args ?? spec.args ?? [], words, text, sub !== undefined);
  if (typeof args === 'string') return { ok: false, error: `${args} Usage: ${commandUsage(spec)}` };
  return { ok: true, value: { ...(sub ? { sub: sub.name } : {}), args } };
}

/** `/policy list [here|global] | allow|ask|disable|reset TOOL [here|global]`: one line of usage. */
export function commandUsage(spec: CommandSpec): string {
  const subs = spec.subcommands ?? [];
  if (!subs.length) return [`/${spec.name}`, ...argsUsage(spec.args ?? [])].join(' ');
  // Subcommands that take the same arguments are written together.
  const groups = new Map<string, string[]>();
  for (const sub of subs) {
    const key = argsUsage(sub.args ?? []).join(' ');
    groups.set(key, [...(groups.get(key) ?? []), sub.name]);
  }
  const parts = [...groups].map(([args, names]) => [names.join('|'), args].filter(Boolean).join(' '));
  return `/${spec.name} ${parts.join(' | ')}`;
}

/** The usage of the arguments only (for a menu description), or undefined when there are none. */
export function argumentUsage(spec: CommandSpec): string | undefined {
  const usage = commandUsage(spec);
  const rest = usage.slice(spec.name.length + 2);
  return rest || undefined;
}

/** The spec of `name` (or an alias of it), case-insensitive. */
export function findCommand(specs: readonly CommandSpec[], name: string): CommandSpec | undefined {
  const lower = name.replace(/^\//, '').toLowerCase();
  return specs.find((spec) => spec.name === lower || spec.aliases?.includes(lower));
}

/** The argument of `spec` named `name` (in any subcommand), for autocompletion. */
export function findArg(spec: CommandSpec, name: string, sub?: string): CommandArg | undefined {
  const lists = sub ? [spec.subcommands?.find((candidate) => candidate.name === sub)?.args ?? []] : [spec.args ?? [], ...(spec.subcommands ?? []).map((candidate) => candidate.args ?? [])];
  for (const list of lists) {
    const found = list.find((arg) => arg.name === name);
    if (found) return found;
  }
  return undefined;
}

function argsUsage(args: readonly CommandArg[]): string[] {
  return args.map((arg) => {
    const shown = arg.kind === 'choice' && arg.choices ? arg.choices.join('|') : arg.name.toUpperCase();
    return arg.required ? shown : `[${shown}]`;
  });
}

/** A word of the argument text and where it starts. */
interface Word {
  text: string;
  at: number;
}

/**
 * The arguments by name, or a sentence saying what is wrong. A bare command
 * (no arguments, no subcommands) ignores words after it; any other refuses
 * words it does not expect, so that a mistyped `globl` is not dropped silently.
 */
function parseArgs(defined: readonly CommandArg[], words: readonly Word[], text: string, inSub: boolean): Record<string, string | number> | string {
  const values: Record<string, string | number> = {};
  const rest = [...words];
  // Optional choices ("here", "global") are taken wherever they stand, except inside free text.
  for (const arg of defined) {
    if (arg.kind !== 'choice' || arg.required || !arg.choices || defined.some((other) => other.kind === 'text')) continue;
    const at = rest.findIndex((word) => arg.choices!.includes(word.text.toLowerCase()));
    if (at >= 0) values[arg.name] = rest.splice(at, 1)[0]!.text.toLowerCase();
  }
  for (const arg of defined) {
    if (arg.name in values) continue;
    if (arg.kind === 'text') {
      // Free text keeps its spacing: from its first word to the end of the line.
      if (rest.length) values[arg.name] = text.slice(rest[0]!.at).trim();
      rest.length = 0;
    } else if (rest.length) {
      const word = rest.shift()!.text;
      const value = typed(arg, word);
      if (value === undefined) return arg.kind === 'integer' ? `${arg.name.toUpperCase()} must be a whole number.` : `${arg.name.toUpperCase()} must be one of ${arg.choices?.join(', ')}.`;
      values[arg.name] = value;
    }
    if (arg.required && !(arg.name in values)) return `${arg.name.toUpperCase()} is missing.`;
  }
  if (rest.length && (defined.length || inSub)) return `"${rest[0]!.text}" is not expected there.`;
  return values;
}

function typed(arg: CommandArg, word: string): string | number | undefined {
  if (arg.kind === 'integer') return /^-?\d+$/.test(word) ? Number(word) : undefined;
  if (arg.kind === 'choice') return arg.choices?.includes(word.toLowerCase()) ? word.toLowerCase() : undefined;
  return word;
}
