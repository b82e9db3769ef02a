import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/app.js';
import { argumentUsage, commandUsage, findArg, findCommand, parseCommand, type CommandSpec } from '../../src/channels/command-grammar.js';
import { buildSlashCommands } from '../../src/channels/discord/commands.js';
import { toBotCommands } from '../../src/channels/telegram/commands.js';
import { silentLogger } from '../../src/log.js';

const policy = findCommand(COMMANDS, 'policy')!;
const jobs: CommandSpec = {
  name: 'jobs',
  description: 'Background jobs',
  defaultSub: 'list',
  subcommands: [
    { name: 'list', description: 'List jobs' },
    { name: 'show', description: 'Show one job', args: [{ name: 'id', description: 'Job id', kind: 'integer', required: true }] },
  ],
};
const remind: CommandSpec = { name: 'remind', description: 'A reminder', args: [{ name: 'text', description: 'What to say', kind: 'text', required: true }] };

describe('parseCommand', () => {
  it('parses a subcommand, a word and an optional choice wherever it stands', () => {
    expect(parseCommand(policy, 'allow http_fetch global')).toEqual({ ok: true, value: { sub: 'allow', args: { tool: 'http_fetch', scope: 'global' } } });
    expect(parseCommand(policy, 'ALLOW GLOBAL http_fetch')).toEqual({ ok: true, value: { sub: 'allow', args: { tool: 'http_fetch', scope: 'global' } } });
    expect(parseCommand(policy, 'disable shell')).toEqual({ ok: true, value: { sub: 'disable', args: { tool: 'shell' } } });
  });

  it('runs the default subcommand when none is given', () => {
    expect(parseCommand(policy, '')).toEqual({ ok: true, value: { sub: 'list', args: {} } });
  });

  it('says what is wrong, with the usage', () => {
    expect(parseCommand(policy, 'allow')).toEqual({ ok: false, error: 'TOOL is missing. Usage: /policy list [here|global] | allow|ask|disable|reset TOOL [here|global]' });
    expect(parseCommand(policy, 'frobnicate x')).toMatchObject({ ok: false, error: expect.stringMatching(/^Usage: \/policy/) });
    expect(parseCommand(jobs, 'show seven')).toMatchObject({ ok: false, error: expect.stringMatching(/^ID must be a whole number/) });
  });

  it('refuses words a command does not expect; a bare command ignores them', () => {
    expect(parseCommand(policy, 'allow shell global please')).toEqual({ ok: false, error: expect.stringMatching(/^"please" is not expected there\. Usage: \/policy/) });
    expect(parseCommand(jobs, 'list all')).toMatchObject({ ok: false, error: expect.stringMatching(/^"all" is not expected there/) });
    expect(parseCommand(findCommand(COMMANDS, 'stop')!, 'now')).toEqual({ ok: true, value: { args: {} } });
  });

  it('types integers and keeps free text with its spacing', () => {
    expect(parseCommand(jobs, 'show 42')).toEqual({ ok: true, value: { sub: 'show', args: { id: 42 } } });
    expect(parseCommand(remind, '  water  the plants ')).toEqual({ ok: true, value: { args: { text: 'water  the plants' } } });
  });

  it('finds commands by alias and arguments by name', () => {
    expect(findCommand(COMMANDS, '/Interrupt')?.name).toBe('stop');
    expect(findCommand(COMMANDS, 'reset')?.name).toBe('new');
    expect(findCommand(COMMANDS, 'nope')).toBeUndefined();
    expect(findArg(policy, 'tool', 'allow')?.complete).toBe('tool');
  });
});

describe('one table, every platform', () => {
  it('writes usage for help and menus', () => {
    expect(commandUsage(policy)).toBe('/policy list [here|global] | allow|ask|disable|reset TOOL [here|global]');
    expect(argumentUsage(jobs)).toBe('list | show ID');
    expect(argumentUsage(findCommand(COMMANDS, 'stop')!)).toBeUndefined();
  });

  it('renders Telegram menu entries with the usage', () => {
    const entries = toBotCommands(COMMANDS);
    expect(entries.find((entry) => entry.command === 'policy')?.description).toBe('Admin tool policy (list [here|global] | allow|ask|disable|reset TOOL [here|global])');
    expect(entries.find((entry) => entry.command === 'stop')?.description).toBe('Stop the running turn');
  });

  it('renders Discord options: subcommands, integers, choices and autocomplete', () => {
    const [rendered] = buildSlashCommands([jobs], silentLogger);
    expect(rendered!.options).toEqual([
      { type: 1, name: 'list', description: 'List jobs', options: [] },
      { type: 1, name: 'show', description: 'Show one job', options: [{ type: 4, name: 'id', description: 'Job id', required: true }] },
    ]);
    const slash = buildSlashCommands(COMMANDS, silentLogger).find((command) => command.name === 'policy')!;
    const allow = (slash.options as Array<{ name: string; options: unknown[] }>).find((option) => option.name === 'allow')!;
    expect(allow.options).toEqual([
      { type: 3, name: 'tool', description: 'Tool name', required: true, autocomplete: true },
      { type: 3, name: 'scope', description: 'Where the policy applies (default: here)', required: false, choices: [{ name: 'here', value: 'here' }, { name: 'global', value: 'global' }] },
    ]);
  });
});
