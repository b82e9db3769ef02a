/**
 * MCP servers as a feature: each configured server is a tool source, and
 * `/mcp` (admins) tells each server's state, transport, tools and last error.
 */
import type { CommandSpec } from '../channels/types.js';
import type { Config } from '../config/schema.js';
import type { Feature } from '../engine/feature.js';
import type { Logger } from '../log.js';
import type { Redactor } from '../safety/secrets.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolSource } from '../tools/source.js';

/** The `/mcp` command. */
export const MCP_COMMAND: CommandSpec = { name: 'mcp', description: 'The MCP tool servers: state, transport, tools, last error (admins)', who: 'admin' };

/**
 * The MCP feature of `config`: a tool source per server (they connect when the
 * registry starts), and `/mcp`. The MCP SDK loads only when a server is configured.
 */
export async function mcpFeature(config: Config, registry: ToolRegistry, log: Logger, version: string, redactor: Redactor): Promise<Feature> {
  const servers = Object.entries(config.mcp.servers);
  const tools: ToolSource[] = [];
  if (servers.length) {
    const { McpServerSource } = await import('./server-source.js');
    for (const [name, server] of servers) tools.push(new McpServerSource(name, server, log.child({ mcp: name }), version, { redactor, limits: config.mcp.limits }));
  }
  return {
    name: 'mcp',
    tools,
    commands: [{ spec: MCP_COMMAND, run: () => Promise.resolve(mcpStatus(registry)) }],
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
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
