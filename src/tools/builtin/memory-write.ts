/**
 * The `memory_write` tool: saves a note for the calling user that later
 * conversations can find with `memory_search`.
 */
import { z } from 'zod';
import type { Tool } from '../types.js';
import type { MemoryStore } from './lib/memory-store.js';

const parameters = z.object({
  text: z.string().trim().min(1).max(2000).describe('The fact or note to remember, written so it makes sense on its own'),
});

/** Creates the memory_write tool over `memory`. */
export function memoryWriteTool(memory: MemoryStore): Tool<typeof parameters> {
  return {
    name: 'memory_write',
    description: 'Remember a note for this user (a preference, a fact, a to-do). Notes persist across conversations.',
    parameters,
    readOnly: false,
    requiresApproval: () => 'never',
    timeoutMs: 10_000,
    describe: ({ text }) => `Remember: "${text.slice(0, 120)}"`,
    async execute({ text }, ctx) {
      const { entry, count } = await memory.write(ctx.userId, text);
      return `Saved note ${entry.id}. This user now has ${count} note${count === 1 ? '' : 's'}.`;
    },
  };
}
