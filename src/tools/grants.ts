/**
 * Grants: the tools a job or a routine may run with nobody watching. One
 * home for the two questions its creation asks: which tools a request names
 * (spelled out, checked), and, when nobody approved it in a prompt, which of
 * those the creator could run without being asked where they asked for it.
 */
import { ToolError } from '../errors.js';
import { decideApproval, DEFAULT_AUTONOMOUS_DENYLIST, AUTONOMOUS_WILDCARD } from './approval-rule.js';
import type { PermissionStore, ToolCatalog } from './permissions.js';
import type { PolicyStore } from './policy.js';
import { staticRequirement } from './requirement.js';
import type { ToolContext } from './types.js';

/** What the grant rules read. */
export interface GrantDeps {
  catalog: ToolCatalog;
  policy: Pick<PolicyStore, 'effective'>;
  permissions: Pick<PermissionStore, 'get'>;
}

/** The grant rules of a running bot. */
export interface GrantRules {
  /**
   * The tools a request names, in order and without duplicates: none named
   * means the read-only tools, `*` every tool the creator may use that a
   * background job can run. Unknown names and tools that never run in the
   * background are refused with a ToolError.
   */
  spell(requested: readonly string[] | undefined, ctx: Pick<ToolContext, 'userId' | 'scope'>): Promise<string[]>;
  /** Of `tools`, those the creator could run in this chat without being asked. */
  standing(tools: readonly string[], ctx: Pick<ToolContext, 'userId' | 'scope' | 'approval'>): Promise<string[]>;
}

/** Creates the grant rules over the registry, the policy and the permissions. */
export function createGrantRules(deps: GrantDeps): GrantRules {
  const usable = async (name: string, ctx: Pick<ToolContext, 'userId' | 'scope'>): Promise<boolean> => {
    const [policy, permission] = await Promise.all([deps.policy.effective(name, ctx.scope), deps.permissions.get(ctx.userId, name)]);
    return policy !== 'disable' && permission !== 'disabled';
  };
  return {
    async spell(requested, ctx) {
      const names = [...new Set((requested ?? []).map((name) => name.trim()).filter(Boolean))];
      const unknown = names.filter((name) => name !== AUTONOMOUS_WILDCARD && !deps.catalog.get(name));
      if (unknown.length) {
        throw new ToolError(`unknown tool${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}. Name only tools that exist: ${deps.catalog.names().join(', ')}.`);
      }
      const meta = names.filter((name) => DEFAULT_AUTONOMOUS_DENYLIST.has(name));
      if (meta.length) throw new ToolError(`${meta.join(', ')} never run${meta.length === 1 ? 's' : ''} in background work; leave ${meta.length === 1 ? 'it' : 'them'} out.`);
      const background = deps.catalog.names().filter((name) => !DEFAULT_AUTONOMOUS_DENYLIST.has(name));
      const expanded =
        requested === undefined
          ? background.filter((name) => deps.catalog.get(name)!.tool.readOnly)
          : names.flatMap((name) => (name === AUTONOMOUS_WILDCARD ? background : [name]));
      const chosen: string[] = [];
      for (const name of new Set(expanded)) if (await usable(name, ctx)) chosen.push(name);
      return chosen;
    },
    async standing(tools, ctx) {
      if (ctx.approval.kind !== 'chat') return [];
      const kept: string[] = [];
      for (const name of tools) {
        const tool = deps.catalog.get(name)?.tool;
        if (!tool) continue;
        const [policy, permission] = await Promise.all([deps.policy.effective(name, ctx.scope), deps.permissions.get(ctx.userId, name)]);
        const decision = decideApproval({ tool: name, requirement: staticRequirement(tool), policy, permission, context: ctx.approval });
        if (decision.kind === 'run') kept.push(name);
      }
      return kept;
    },
  };
}
