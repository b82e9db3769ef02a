/**
 * Shared test fixtures for the tools layer: a SQLite store in a temp folder, a
 * tool context, small test tools and a pipeline wired with real stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { silentLogger } from '../../src/log.js';
import { createRedactor } from '../../src/safety/secrets.js';
import { Store } from '../../src/store/store.js';
import { createAuditLog, type AuditLog } from '../../src/tools/audit.js';
import { createPermissionStore, type PermissionStore } from '../../src/tools/permissions.js';
import { createToolPipeline, type ToolPipelineDeps } from '../../src/tools/pipeline.js';
import { createPolicyStore, type PolicyStore } from '../../src/tools/policy.js';
import { createToolRegistry, type ToolRegistry } from '../../src/tools/registry.js';
import type { SharedFolder, WorkspaceSettings } from '../../src/tools/builtin/lib/workspaces.js';
import type { ApprovalContext, Tool, ToolContext, ToolPipeline } from '../../src/tools/types.js';

/** A temp folder removed by `cleanup`. */
export function tempDir(prefix = 'pincer-tools-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Opens a SQLite store file in `dir`. */
export function openStore(dir: string, name = 'store.sqlite'): Promise<Store> {
  return Store.open({ url: `sqlite://${join(dir, name)}` });
}

/** Workspaces under `root`, sharing `shared`, hiding nothing but their own trees. */
export function workspacesAt(root: string, shared: SharedFolder[] = []): WorkspaceSettings {
  return { root, shared, hidden: [join(root, 'users'), join(root, 'chats')] };
}

/** The workspace of {@link makeContext}'s default caller (telegram:1 in a DM), under the workspaces' root. */
export const OWN_WORKSPACE = join('users', 'telegram', '1');

/** A tool context for user `telegram:1` in a DM, unless overridden. */
export function makeContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    userId: 'telegram:1',
    threadKey: 'telegram:1',
    channel: 'telegram',
    scope: 'global',
    approval: { kind: 'chat', chatKind: 'dm' },
    signal: new AbortController().signal,
    log: silentLogger,
    ...overrides,
  };
}

/** A chat approval context of the given kind. */
export const dm: ApprovalContext = { kind: 'chat', chatKind: 'dm' };
export const group: ApprovalContext = { kind: 'chat', chatKind: 'group' };

/** A tool built from parts, with defaults for the rest. */
export function fakeTool(parts: Partial<Tool> & { name: string }): Tool {
  return {
    description: `test tool ${parts.name}`,
    parameters: z.object({}),
    readOnly: true,
    requiresApproval: () => 'never',
    execute: async () => 'done',
    ...parts,
  };
}

/** An `echo` tool: `{ text: string, times?: int }`, returns the text repeated. */
export function echoTool(extra: Partial<Tool> = {}): Tool {
  return fakeTool({
    name: 'echo',
    parameters: z.object({ text: z.string().max(5000), times: z.number().int().min(1).max(5).default(1) }),
    execute: async (params: { text: string; times: number }) => params.text.repeat(params.times),
    ...extra,
  });
}

/** An audit log kept in memory (fast for tests that run thousands of calls). */
export function memoryAudit(): AuditLog & { records: unknown[] } {
  const records: unknown[] = [];
  return {
    records,
    record: async (entry) => {
      records.unshift(entry);
    },
    recent: async (limit = 50) => records.slice(0, limit) as never,
  };
}

/** A wired pipeline over a real store. */
export interface Harness {
  store: Store;
  registry: ToolRegistry;
  permissions: PermissionStore;
  policy: PolicyStore;
  audit: AuditLog;
  pipeline: ToolPipeline;
  close(): Promise<void>;
}

/** Builds a pipeline with real registry, permission and policy stores over a SQLite store in a temp folder. */
export async function makeHarness(tools: Tool[], overrides: Partial<ToolPipelineDeps> = {}): Promise<Harness> {
  const temp = tempDir();
  const store = await openStore(temp.dir);
  const registry = createToolRegistry();
  for (const tool of tools) registry.register(tool);
  const audit = overrides.audit ?? createAuditLog(store, { log: silentLogger });
  const permissions = createPermissionStore(store, registry);
  const policy = createPolicyStore({ store, catalog: registry, audit });
  const pipeline = createToolPipeline({
    registry,
    permissions,
    policy,
    store,
    audit,
    redactor: createRedactor(['configured-secret-value']),
    log: silentLogger,
    config: { toolConcurrency: 4, maxOutputChars: 2000 },
    ...overrides,
  });
  return {
    store,
    registry,
    permissions,
    policy,
    audit,
    pipeline,
    close: async () => {
      await store.close();
      temp.cleanup();
    },
  };
}
