/**
 * Users' own tool permissions: `alwaysAllow`, `askEachTime` or `disabled` per
 * (user, tool), persisted in the store. Unset permissions come from seeded
 * defaults: read-only tools are always allowed, everything else asks. Reads
 * come from memory; where instances share the store, every read first checks
 * the shared version (settings-version.ts).
 */
import { z } from 'zod';
import type { Store } from '../store/store.js';
import { staticRequirement } from './requirement.js';
import { versionGate, type SettingsVersion } from './settings-version.js';
import type { Permission, Tool } from './types.js';

/** The tools a store needs to know about (the registry satisfies this). */
export interface ToolCatalog {
  get(name: string): { tool: Tool } | undefined;
  names(): string[];
}

/** A user's permission for one tool and where it comes from. */
export interface PermissionEntry {
  tool: string;
  permission: Permission;
  source: 'user' | 'default';
}

/** Why a permission could not be stored. */
export type PermissionRefusal = 'always_requires_approval';

/** The outcome of {@link PermissionStore.set}: refusals carry a sentence for the user. */
export type SetPermissionResult = { ok: true } | { ok: false; reason: PermissionRefusal; message: string };

/** Reads and writes users' permissions. */
export interface PermissionStore {
  /** The user's permission for a tool: stored, or the seeded default. Cheap (cached while the settings' version stays the same). */
  get(userId: string, tool: string): Promise<Permission>;
  /** The user's permission for every tool, read once: for deciding about many tools at a time. */
  of(userId: string): Promise<(tool: string) => Permission>;
  /** Every known tool plus any stored one, with the user's permission. */
  list(userId: string): Promise<PermissionEntry[]>;
  /** The people who have a choice of their own stored (the console's list of everyone's choices). */
  people(): Promise<string[]>;
  /** Stores a permission; refuses `alwaysAllow` for a tool that always needs approval. Resolves once written. */
  set(userId: string, tool: string, permission: Permission): Promise<SetPermissionResult>;
  /** Goes back to the seeded default. Resolves once written. */
  reset(userId: string, tool: string): Promise<void>;
  /** A number that changes whenever any permission changes: lets callers cache what they derive from it. */
  revision(): number;
  /** Checks the shared version: after it, {@link revision} has moved if another instance changed a permission. */
  refresh(): Promise<void>;
  /** Drops what is cached (another instance changed a permission): the next read comes from the store. */
  invalidate(): void;
}

const PermissionSchema = z.enum(['alwaysAllow', 'askEachTime', 'disabled']);
const UserPermissionsSchema = z.object({ tools: z.record(z.string(), PermissionSchema) });
type UserPermissions = z.infer<typeof UserPermissionsSchema>;

/** Users kept in the read cache; past this the oldest is dropped. */
const CACHE_USERS = 10_000;

/** The permission a user has before choosing one. */
export function seededPermission(tool: Tool | undefined): Permission {
  if (!tool) return 'askEachTime';
  return tool.readOnly && staticRequirement(tool) !== 'always' ? 'alwaysAllow' : 'askEachTime';
}

/**
 * Creates the permission store over `store`, knowing the tools through
 * `catalog`; `version` is the one shared with the other instances on the
 * store (none in one process).
 */
export function createPermissionStore(store: Store, catalog: ToolCatalog, version?: SettingsVersion): PermissionStore {
  const records = store.namespace('tool-permissions', UserPermissionsSchema);
  // The store lists no keys: who has choices is kept apart, under one key.
  const chosenBy = store.namespace('tool-permissions-people', z.array(z.string()));
  const cache = new Map<string, Promise<UserPermissions>>();
  let revision = 0;
  const invalidate = () => {
    cache.clear();
    revision += 1;
  };
  const fresh = version && versionGate(version, invalidate);
  const cached = (userId: string): Promise<UserPermissions> => {
    const hit = cache.get(userId);
    if (hit) return hit;
    const loading = records.get(userId).then((r) => r ?? { tools: {} });
    loading.catch(() => cache.delete(userId));
    remember(cache, userId, loading);
    return loading;
  };
  const load = (userId: string): Promise<UserPermissions> => (fresh ? fresh().then(() => cached(userId)) : cached(userId));
  const write = async (userId: string, change: (tools: Record<string, Permission>) => void) => {
    cache.delete(userId);
    const next = await records.update(userId, (current) => {
      const tools = { ...(current?.tools ?? {}) };
      change(tools);
      return Object.keys(tools).length ? { tools } : undefined;
    });
    remember(cache, userId, Promise.resolve(next ?? { tools: {} }));
    await chosenBy.update('all', (current) => {
      const ids = new Set(current ?? []);
      if (next) ids.add(userId);
      else ids.delete(userId);
      return [...ids];
    });
    revision += 1;
    // Counted before the user is told: from then on no instance decides by the old permission.
    await version?.bump();
  };
  const effective = (stored: UserPermissions, tool: string): Permission =>
    stored.tools[tool] ?? seededPermission(catalog.get(tool)?.tool);
  return {
    async get(userId, tool) {
      return effective(await load(userId), tool);
    },
    async of(userId) {
      const stored = await load(userId);
      return (tool) => effective(stored, tool);
    },
    async list(userId) {
      const stored = await load(userId);
      const names = [...new Set([...catalog.names(), ...Object.keys(stored.tools)])];
      return names.map((tool) => ({ tool, permission: effective(stored, tool), source: stored.tools[tool] ? 'user' : 'default' }));
    },
    async people() {
      return (await chosenBy.get('all')) ?? [];
    },
    async set(userId, tool, permission) {
      const known = catalog.get(tool)?.tool;
      if (permission === 'alwaysAllow' && known && staticRequirement(known) === 'always') {
        return {
          ok: false,
          reason: 'always_requires_approval',
          message: `"${tool}" asks for approval every time; it cannot be set to always allow.`,
        };
      }
      await write(userId, (tools) => {
        tools[tool] = permission;
      });
      return { ok: true };
    },
    async reset(userId, tool) {
      await write(userId, (tools) => {
        delete tools[tool];
      });
    },
    revision: () => revision,
    refresh: () => fresh?.() ?? Promise.resolve(),
    invalidate,
  };
}

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > CACHE_USERS) cache.delete(cache.keys().next().value as string);
}
