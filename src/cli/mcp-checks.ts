/**
 * The MCP check of `pincer doctor`: each configured server starts (within its
 * start time) and lists its tools, exactly as the bot starts it.
 */
import type { Config } from '../config/schema.js';
import { silentLogger } from '../log.js';
import { McpServerSource } from '../mcp/server-source.js';
import { fail, pass, type CheckResult } from './check-result.js';

/** One line per configured MCP server. */
export async function checkMcpServers(config: Config): Promise<CheckResult[]> {
  return Promise.all(
    Object.entries(config.mcp.servers).map(async ([name, server]) => {
      const source = new McpServerSource(name, server, silentLogger);
      try {
        await source.start();
        const status = source.status();
        if (status.state !== 'ready') {
          return fail(`MCP server ${name}`, `did not start (${status.transport}): ${status.lastError ?? 'no reason given'}`, server.command ? `check that \`${server.command}\` runs from this folder with its args` : `check that ${server.url} answers`);
        }
        return pass(`MCP server ${name}`, `${status.tools} tool${status.tools === 1 ? '' : 's'} over ${status.transport}`);
      } finally {
        await source.stop();
      }
    }),
  );
}
