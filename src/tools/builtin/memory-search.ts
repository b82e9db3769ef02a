/**
 * The `memory_search` tool: finds notes by the words they contain, in the
 * person's own notebook in a DM and in the conversation's in a group.
 */
import { z } from 'zod';
import type { Tool } from '../types.js';
import type { MemoryStore } from './lib/memory-store.js';
import { workspaceOwnerOf } from './lib/workspaces.js';

const parameters = z.object({
  query: z.string().max(500).describe('Words to look for; empty to list the most recent notes'),
  limit: z.number().int().min(1).max(50).default(10).describe('Most notes to return'),
});

/** Creates the memory_search tool over `memory`. */
export function memorySearchTool(memory: MemoryStore): Tool<typeof parameters> {
  return {
    name: 'memory_search',
    description: "Search the saved notes by keywords (the person's own in a direct message, the group's in a group). Returns the best matches, newest first on ties.",
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 10_000,
    async execute({ query, limit }, ctx) {
      const hits = await memory.search(workspaceOwnerOf(ctx), query, limit);
      if (hits.length === 0) return query.trim() ? `No notes match "${query}".` : 'No notes saved yet.';
      return hits.map((hit) => `- [${hit.id}] ${new Date(hit.at).toISOString().slice(0, 10)}: ${hit.text}`).join('\n');
    },
  };
}
