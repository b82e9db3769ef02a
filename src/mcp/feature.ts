/**
 * MCP servers as a feature: each configured server is a tool source, and
 * `/mcp` (admins) tells each server's state, transport, tools and last error;
 * `/mcp restart NAME` (owners) stops and starts one server, its tools listed anew.
 */
import type { CommandSpec } from '../channels/types.js';
import type { Config } from '../config/schema.js';
import type { CommandCaller, CommandReply, Feature } from '../engine/feature.js';
import type { ParsedCommand } from '../channels/command-grammar.js';
import type { Logger } from '../log.js';
import type { Redactor } from '../safety/secrets.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolSource } from '../tools/source.js';

/** The `/mcp` command. */
export const MCP_COMMAND: CommandSpec = {
  name: 'mcp',
  description: 'The MCP tool servers: state, transport, tools, last error (admins)',
  who: 'admin',
  defaultSub: 'status',
  subcommands: [
    { name: 'status', description: 'Each server\'s state, transport, tools and last error' },
    {
      name: 'restart',
      description: 'Stop and start one server, its tools listed again (owners)',
      args: [{ name: 'server', description: 'Server name (as in mcp.servers)', kind: 'word', required: true }],
    },
  ],
};

/** A server that can be restarted by name. */
interface Restartable extends ToolSource {
  readonly server: string;
  restart(): Promise<void>;
}

/**
 * The MCP feature of `config`: a tool source per server (they connect when the
 * registry starts), and `/mcp`. The MCP SDK loads only when a server is configured.
 */
export async function mcpFeature(config: Config, registry: ToolRegistry, log: Logger, version: string, redactor: Redactor): Promise<Feature> {
  const servers = Object.entries(config.mcp.servers);
  const sources: Restartable[] = [];
  if (servers.length) {
    const { McpServerSource } = await import('./server-source.js');
    for (const [name, server] of servers) sources.push(new McpServerSource(name, server, log.child({ mcp: name }), version, { redactor, limits: config.mcp.limits }));
  }
  return {
    name: 'mcp',
    tools: sources,
    commands: [{ spec: MCP_COMMAND, run: (event, parsed, caller) => mcpCommand(registry, sources, parsed, caller, log) }],
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
}

/** `/mcp` and `/mcp restart NAME`. */
async function mcpCommand(registry: ToolRegistry, sources: readonly Restartable[], parsed: ParsedCommand, caller: CommandCaller, log: Logger): Promise<CommandReply> {
  if (parsed.sub !== 'restart') return mcpStatus(registry);
  if (!caller.owner) return { text: 'Only an owner of this bot can restart an MCP server.', private: true };
  const name = String(parsed.args.server);
  const source = sources.find((candidate) => candidate.server === name);
  if (!source) return { text: `No MCP server is called "${name}". ${mcpStatus(registry)}`, private: true };
  log.info({ server: name, by: caller.userId }, 'MCP server restart asked');
  await source.restart();
  const status = source.status();
  return `Restarted ${name}: ${status.state}, ${status.tools} tool${status.tools === 1 ? '' : 's'}${status.lastError ? `; last error: ${status.lastError}` : ''}.`;
}

/** Each MCP server's state, transport, tool count and last error. */
function mcpStatus(registry: ToolRegistry): string {
  const servers = registry.sourceStatuses().filter((source) => source.name.startsWith('mcp:'));
  if (!servers.length) return 'No MCP servers are configured (mcp.servers in the config).';
  const lines = servers.map(
    (server) =>
      `• ${server.name.slice(4)}: ${server.state}${server.transport ? ` (${server.transport})` : ''}, ${server.tools} tool${server.tools === 1 ? '' : 's'}${server.lastError ? `; last error: ${server.lastError}` : ''}`,
  );
  return `MCP servers:\n${lines.join('\n')}`;
}
