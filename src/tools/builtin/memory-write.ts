/**
 * The `memory_write` tool: saves a note that later conversations can find with
 * `memory_search`: the person's own in a DM, the conversation's in a group.
 */
import { z } from 'zod';
import type { Tool } from '../types.js';
import type { MemoryStore } from './lib/memory-store.js';
import { workspaceOwnerOf } from './lib/workspaces.js';

const parameters = z.object({
  text: z.string().trim().min(1).max(2000).describe('The fact or note to remember, written so it makes sense on its own'),
});

/** Creates the memory_write tool over `memory`. */
export function memoryWriteTool(memory: MemoryStore): Tool<typeof parameters> {
  return {
    name: 'memory_write',
    description: "Remember a note (a preference, a fact, a to-do): the person's own in a direct message, the group's in a group. Notes persist across conversations.",
    parameters,
    readOnly: false,
    requiresApproval: () => 'never',
    timeoutMs: 10_000,
    describe: ({ text }) => `Remember: "${text.slice(0, 120)}"`,
    async execute({ text }, ctx) {
      const owner = workspaceOwnerOf(ctx);
      const { entry, count } = await memory.write(owner, text);
      const whose = owner.kind === 'person' ? 'This user' : 'This group';
      return `Saved note ${entry.id}. ${whose} now has ${count} note${count === 1 ? '' : 's'}.`;
    },
  };
}
