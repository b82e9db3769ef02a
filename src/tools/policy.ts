/**
 * Admin tool policy per scope: `allow`, `ask` or `disable` for a tool, either
 * everywhere (`global`) or in one guild, group or workspace. Read on every LLM
 * call, so reads come from memory; writes go to the store first, then refresh
 * the cache, and leave an audit record. Where instances share the store, every
 * read first checks the shared version (settings-version.ts).
 */
import { z } from 'zod';
import type { Store } from '../store/store.js';
import type { AuditLog } from './audit.js';
import type { ToolCatalog } from './permissions.js';
import { versionGate, type SettingsVersion } from './settings-version.js';
import type { PolicyMode } from './types.js';

/** The scope that applies everywhere unless a narrower scope says otherwise. */
export const GLOBAL_SCOPE = 'global';

/** `global`, or `platform:kind:id` such as `discord:guild:1`, `telegram:chat:-100`, `slack:team:T1`. */
const SCOPE = /^(?:global|[a-z][a-z0-9_-]{0,20}:[a-z][a-z0-9_-]{0,20}:[^\s:]{1,128})$/;

const PolicySettingSchema = z.object({
  mode: z.enum(['allow', 'ask', 'disable']),
  by: z.string(),
  at: z.number(),
});
const ScopePolicySchema = z.object({ tools: z.record(z.string(), PolicySettingSchema) });
type ScopePolicy = z.infer<typeof ScopePolicySchema>;

/** One stored setting: the mode, who set it and when. */
export type PolicySetting = z.infer<typeof PolicySettingSchema>;

/** A tool's effective policy in a scope, and which level it comes from. */
export interface PolicyEntry {
  tool: string;
  mode: PolicyMode;
  source: 'scope' | 'global' | 'default';
  setting?: PolicySetting;
}

/** The outcome of a change: refusals carry a sentence for the admin. */
export type PolicyChangeResult = { ok: true } | { ok: false; message: string };

/** Reads and changes the admin policy. */
export interface PolicyStore {
  /** Scope setting if present, else the global one, else `allow`. Served from memory while the settings' version stays the same. */
  effective(tool: string, scope: string): Promise<PolicyMode>;
  /** Every tool's effective mode in `scope`, read once: for deciding about many tools at a time. */
  modesIn(scope: string): Promise<(tool: string) => PolicyMode>;
  /** The effective policy with the level it comes from (an admin's setting for this scope, the global one, or none). */
  entry(tool: string, scope: string): Promise<PolicyEntry>;
  /** Every known or configured tool with its effective policy in `scope`. */
  list(scope: string): Promise<PolicyEntry[]>;
  /** Stores a mode for a tool in a scope. Resolves once written and audited. */
  set(tool: string, scope: string, mode: PolicyMode, byUserId: string): Promise<PolicyChangeResult>;
  /** Removes the scope's own setting (the global one, or `allow`, applies again). */
  reset(tool: string, scope: string, byUserId?: string): Promise<PolicyChangeResult>;
  /** A number that changes whenever any policy changes: lets callers cache what they derive from it. */
  revision(): number;
  /** Checks the shared version: after it, {@link revision} has moved if another instance changed the policy. */
  refresh(): Promise<void>;
  /** Drops what is cached (another instance changed the policy): the next read comes from the store. */
  invalidate(): void;
}

/** What the policy store needs. */
export interface PolicyStoreDeps {
  store: Store;
  catalog: ToolCatalog;
  audit: AuditLog;
  now?: () => number;
  /** The version shared with the other instances on the store; none in one process. */
  version?: SettingsVersion;
}

/** True for `global` and for well-formed platform scopes. */
export function isValidScope(scope: string): boolean {
  return SCOPE.test(scope);
}

/** Creates the policy store. */
export function createPolicyStore(deps: PolicyStoreDeps): PolicyStore {
  const records = deps.store.namespace('tool-policy', ScopePolicySchema);
  const now = deps.now ?? Date.now;
  const cache = new Map<string, Promise<ScopePolicy>>();
  let revision = 0;
  const invalidate = () => {
    cache.clear();
    revision += 1;
  };
  const fresh = deps.version && versionGate(deps.version, invalidate);
  const cached = (scope: string): Promise<ScopePolicy> => {
    const hit = cache.get(scope);
    if (hit) return hit;
    const loading = records.get(scope).then((r) => r ?? { tools: {} });
    loading.catch(() => cache.delete(scope));
    cache.set(scope, loading);
    return loading;
  };
  const load = (scope: string): Promise<ScopePolicy> => (fresh ? fresh().then(() => cached(scope)) : cached(scope));
  const change = async (tool: string, scope: string, mode: PolicyMode | 'reset', by: string): Promise<PolicyChangeResult> => {
    const refusal = checkChange(tool, scope, mode, deps.catalog);
    if (refusal) return refusal;
    cache.delete(scope);
    const at = now();
    const next = await records.update(scope, (current) => {
      const tools = { ...(current?.tools ?? {}) };
      if (mode === 'reset') delete tools[tool];
      else tools[tool] = { mode, by, at };
      return Object.keys(tools).length ? { tools } : undefined;
    });
    cache.set(scope, Promise.resolve(next ?? { tools: {} }));
    revision += 1;
    // Counted before the admin is told: from then on no instance decides by the old policy.
    await deps.version?.bump();
    await deps.audit.record({ kind: 'policy', tool, scope, mode, by, at });
    return { ok: true };
  };
  const resolve = async (tool: string, scope: string): Promise<PolicyEntry> => {
    const [own, global] = await Promise.all([load(scope), load(GLOBAL_SCOPE)]);
    const setting = own.tools[tool];
    if (setting) return { tool, mode: setting.mode, source: scope === GLOBAL_SCOPE ? 'global' : 'scope', setting };
    const fallback = global.tools[tool];
    if (fallback) return { tool, mode: fallback.mode, source: 'global', setting: fallback };
    return { tool, mode: 'allow', source: 'default' };
  };
  return {
    async effective(tool, scope) {
      return (await resolve(tool, scope)).mode;
    },
    async modesIn(scope) {
      const [own, global] = await Promise.all([load(scope), load(GLOBAL_SCOPE)]);
      return (tool) => own.tools[tool]?.mode ?? global.tools[tool]?.mode ?? 'allow';
    },
    entry: resolve,
    async list(scope) {
      const [own, global] = await Promise.all([load(scope), load(GLOBAL_SCOPE)]);
      const names = new Set([...deps.catalog.names(), ...Object.keys(global.tools), ...Object.keys(own.tools)]);
      return Promise.all([...names].map((tool) => resolve(tool, scope)));
    },
    set: (tool, scope, mode, byUserId) => change(tool, scope, mode, byUserId),
    reset: (tool, scope, byUserId = 'unknown') => change(tool, scope, 'reset', byUserId),
    revision: () => revision,
    refresh: () => fresh?.() ?? Promise.resolve(),
    invalidate,
  };
}

function checkChange(
  tool: string,
  scope: string,
  mode: PolicyMode | 'reset',
  catalog: ToolCatalog,
): { ok: false; message: string } | undefined {
  if (!isValidScope(scope)) {
    return { ok: false, message: `"${scope}" is not a policy scope. Use "global" or a scope such as "discord:guild:123".` };
  }
  // A reset may clean up after a tool that is no longer registered; setting one is most likely a typo.
  if (mode !== 'reset' && !catalog.get(tool)) {
    return { ok: false, message: `There is no tool named "${tool}". Known tools: ${catalog.names().join(', ') || 'none'}.` };
  }
  return undefined;
}
