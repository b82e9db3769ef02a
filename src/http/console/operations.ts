/**
 * The console's pages about the bot as a whole, built for one viewer: the MCP
 * servers (as `/mcp` tells them), usage per person and day (from the usage
 * ledger), each person's own tool choices (as `/permissions` lists them) and
 * the instances sharing the store. Texts a server or a person wrote are
 * redacted as the logs are.
 */
import { dayOf } from '../../engine/usage.js';
import type { ConsoleDeps } from './deps.js';
import { restartsMcp, seesEveryone, type Viewer } from './viewer.js';

/** Days in the usage table. */
export const USAGE_DAYS = 14;

/** Each MCP server's state, transport, tools and last error, and whether the viewer may restart it. */
export function mcpServers(deps: ConsoleDeps, viewer: Viewer) {
  const { registry, outbox } = deps.services;
  const servers = registry.sourceStatuses().filter((source) => source.name.startsWith('mcp:'));
  return {
    mayRestart: restartsMcp(viewer),
    servers: servers.map((server) => {
      const name = server.name.slice('mcp:'.length);
      return {
        name,
        state: server.state,
        transport: server.transport ?? '',
        tools: registry.names().filter((tool) => tool.startsWith(`${name}__`)),
        lastError: server.lastError ? outbox.redact(server.lastError) : undefined,
      };
    }),
  };
}

/** Model calls, tokens and cost per person and day over the last {@link USAGE_DAYS} days: everyone's, or the viewer's own. */
export async function usageByPerson(deps: ConsoleDeps, viewer: Viewer) {
  const everyone = seesEveryone(viewer);
  const now = Date.now();
  const rows = [];
  for (let back = 0; back < USAGE_DAYS; back++) {
    const day = dayOf(now - back * 86_400_000);
    const people = (await deps.services.usage.usersOn(day)).filter((person) => everyone || person.userId === viewer.userId);
    people.sort((a, b) => b.costUsd - a.costUsd || a.userId.localeCompare(b.userId));
    for (const person of people) {
      rows.push({ day, userId: person.userId, calls: person.calls, inputTokens: person.inputTokens, outputTokens: person.outputTokens, costUsd: person.costUsd });
    }
  }
  return { everyone, days: USAGE_DAYS, rows };
}

/** Each person's tools set to Always allow or disabled, as `/permissions` lists them; undefined when the viewer may not see them. */
export async function toolChoices(deps: ConsoleDeps, viewer: Viewer) {
  if (!seesEveryone(viewer)) return undefined;
  const { permissions } = deps.services;
  const people = (await permissions.people()).sort().slice(0, 500);
  const listed = await Promise.all(
    people.map(async (userId) => ({
      userId,
      tools: (await permissions.list(userId))
        .filter((entry) => entry.source === 'user' && entry.permission !== 'askEachTime')
        .map((entry) => ({ tool: entry.tool, choice: entry.permission === 'alwaysAllow' ? 'always allowed' : 'disabled' })),
    })),
  );
  return listed.filter((person) => person.tools.length);
}
