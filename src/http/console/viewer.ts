/**
 * Who is looking at the console, and what they may see: the console's access
 * rule in one place, a pure function of the viewer and the thing looked at.
 *
 * - An owner sees everything.
 * - An admin (a configured admin of the bot, or an admin of groups on their
 *   platform) sees the group conversations, jobs and routines of the scopes
 *   they administer, and their own jobs and routines; never another person's
 *   DM. A configured admin administers every group (`allGroups`), as in chat.
 * - The global policy is shown and changed only by owners and configured
 *   admins, as `/policy` in a DM allows.
 */
import { z } from 'zod';

/** The signed-in person and their standing, fixed at sign-in. */
export const ViewerSchema = z.object({
  /** Qualified user id (`telegram:42`). */
  userId: z.string(),
  /** Display name, for the page and the audit. */
  name: z.string(),
  role: z.enum(['owner', 'admin']),
  /** Administers every group (a configured admin). */
  allGroups: z.boolean(),
  /** The policy scopes of the groups they administer (`telegram:chat:-100`). */
  scopes: z.array(z.string()),
});
/** See {@link ViewerSchema}. */
export type Viewer = z.infer<typeof ViewerSchema>;

/** A conversation as the rule needs it. */
export interface ChatOfThread {
  kind: 'dm' | 'group';
  scope: string;
}

/** Whether `viewer` administers the group scope `scope`. */
export function administers(viewer: Viewer, scope: string): boolean {
  return viewer.role === 'owner' || viewer.allGroups || viewer.scopes.includes(scope);
}

/** Whether `viewer` may see a conversation. */
export function seesConversation(viewer: Viewer, chat: ChatOfThread): boolean {
  if (viewer.role === 'owner') return true;
  return chat.kind === 'group' && administers(viewer, chat.scope);
}

/** Whether `viewer` may see a job or routine (and ask to manage it: the command then decides). */
export function seesWork(viewer: Viewer, work: { owner: string; origin: ChatOfThread }): boolean {
  return work.owner === viewer.userId || seesConversation(viewer, work.origin);
}

/** The policy scopes `viewer` may read and change: `global` for owners and configured admins. */
export function policyScopes(viewer: Viewer, knownScopes: readonly string[]): string[] {
  const groups = knownScopes.filter((scope) => scope !== 'global' && administers(viewer, scope));
  return viewer.role === 'owner' || viewer.allGroups ? ['global', ...groups] : groups;
}

/** Whether `viewer` sees everyone's usage and tool choices: owners and configured admins, as `/usage` shows them everyone's. */
export function seesEveryone(viewer: Viewer): boolean {
  return viewer.role === 'owner' || viewer.allGroups;
}

/** Whether `viewer` may restart an MCP server: owners only, as `/mcp restart` allows. */
export function restartsMcp(viewer: Viewer): boolean {
  return viewer.role === 'owner';
}
