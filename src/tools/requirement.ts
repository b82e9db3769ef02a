/**
 * A tool's approval requirement when no particular arguments are known: what
 * `/tools` shows, what decides the seeded permission and whether a user may
 * choose "always allow".
 */
import type { ApprovalRequirement, Tool } from './types.js';

/**
 * The requirement a tool states for empty arguments. Built-in tools state one
 * requirement whatever the arguments. A tool whose `requiresApproval` throws on
 * empty arguments is taken as `unlessAutoApproved`; the per-call decision still
 * asks whenever the tool says `always` for the real arguments.
 */
export function staticRequirement(tool: Pick<Tool, 'requiresApproval'>): ApprovalRequirement {
  try {
    return tool.requiresApproval({} as never);
  } catch {
    return 'unlessAutoApproved';
  }
}
