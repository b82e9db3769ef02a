/**
 * The built-in tools, built from the configuration. The shell tool is only
 * included when `tools.shell.enabled` is true.
 */
import { join, resolve } from 'node:path';
import type { Config } from '../../config/schema.js';
import type { Store } from '../../store/store.js';
import { StaticToolSource, type ToolSource } from '../source.js';
import type { Tool } from '../types.js';
import { calculatorTool } from './calculator.js';
import { filesListTool } from './files-list.js';
import { filesReadTool } from './files-read.js';
import { filesSendTool } from './files-send.js';
import { filesWriteTool } from './files-write.js';
import { httpFetchTool } from './http-fetch.js';
import type { ResolveHost } from './lib/address-policy.js';
import { createMemoryStore } from './lib/memory-store.js';
import { CHATS_FOLDER, leftoverEntries, USERS_FOLDER, workspaceFolder, workspaceOwnerOf, type WorkspaceCaller, type WorkspaceSettings } from './lib/workspaces.js';
import { memorySearchTool } from './memory-search.js';
import { memoryWriteTool } from './memory-write.js';
import { shellTool } from './shell.js';
import { timeTool } from './time.js';

/** What the built-in tools need besides the configuration. */
export interface BuiltinToolDeps {
  /** Where memory notes are kept. */
  store: Store;
  /** Host name resolution for http_fetch (default: the system resolver). */
  resolveHost?: ResolveHost;
  /** Milliseconds clock (default Date.now). */
  clock?: () => number;
}

/** The configuration keys the built-in tools read. */
export type BuiltinToolsConfig = Pick<Config, 'dataDir' | 'tools'>;

/** Entries named in {@link leftoverWorkspaceNotice} before the rest is counted. */
const LEFTOVERS_NAMED = 5;

/** The folder holding every workspace: `tools.workspaceDir`, or `<dataDir>/workspace`, as an absolute path. */
export function workspaceDirOf(config: BuiltinToolsConfig): string {
  return resolve(config.tools.workspaceDir ?? join(config.dataDir, 'workspace'));
}

/** Where the workspaces are and what they share, from the configuration. */
export function workspaceSettingsOf(config: BuiltinToolsConfig): WorkspaceSettings {
  const root = workspaceDirOf(config);
  return {
    root,
    shared: config.tools.files.shared.map((folder) => ({ ...folder, path: resolve(folder.path) })),
    hidden: [resolve(config.dataDir), join(root, USERS_FOLDER), join(root, CHATS_FOLDER)],
  };
}

/**
 * The workspace folder a call uses: the person's own in a DM, the
 * conversation's in a group (see `lib/workspaces.ts`).
 */
export function workspaceDirFor(config: BuiltinToolsConfig, caller: WorkspaceCaller): string {
  return workspaceFolder(workspaceDirOf(config), workspaceOwnerOf(caller));
}

/**
 * What the operator should know about files at the top of the workspaces'
 * folder: the one workspace older versions shared between everyone. They are
 * left where they are and no call reaches them; the notice says how to give
 * them to someone or share them. Undefined when there are none, or when they
 * are shared already (a shared folder is the workspaces' folder itself).
 */
export async function leftoverWorkspaceNotice(config: Pick<Config, 'dataDir' | 'tools' | 'owners'>): Promise<string | undefined> {
  const { root, shared } = workspaceSettingsOf(config);
  const entries = await leftoverEntries(root);
  if (entries.length === 0 || shared.some((folder) => folder.path === root)) return undefined;
  const named = entries.slice(0, LEFTOVERS_NAMED).join(', ') + (entries.length > LEFTOVERS_NAMED ? `, and ${entries.length - LEFTOVERS_NAMED} more` : '');
  const owner = config.owners[0];
  const example = owner ? `${owner}'s is ${workspaceFolder(root, { kind: 'person', userId: owner })}` : `e.g. ${join(root, USERS_FOLDER, 'telegram', '<user id>')}`;
  return (
    `${root} holds files of the one workspace everyone shared before workspaces were per person (${named}); ` +
    `they stay where they are and no one's tools reach them now. Move what belongs to someone into their own workspace (${example}), ` +
    `or share them with everyone, read-only: tools.files.shared: [{ name: old, path: ${root} }] (the workspaces inside it stay hidden).`
  );
}

/**
 * The built-in tools as the registry's first tool source.
 *
 * @example
 * registry.addSource(builtinToolSource(config, { store }));
 */
export function builtinToolSource(config: BuiltinToolsConfig, deps: BuiltinToolDeps): ToolSource {
  return new StaticToolSource('builtin', builtinTools(config, deps));
}

/** Every built-in tool for this configuration. */
export function builtinTools(config: BuiltinToolsConfig, deps: BuiltinToolDeps): Tool[] {
  const workspaces = workspaceSettingsOf(config);
  const memory = createMemoryStore(deps.store, deps.clock);
  const tools: Tool[] = [
    timeTool(deps.clock),
    calculatorTool(),
    memoryWriteTool(memory),
    memorySearchTool(memory),
    httpFetchTool({ ...config.tools.http, resolve: deps.resolveHost }),
    filesListTool(workspaces),
    filesReadTool(workspaces),
    filesWriteTool(workspaces),
    filesSendTool(workspaces),
  ] as Tool[];
  if (config.tools.shell.enabled) tools.push(shellTool({ ...config.tools.shell, workspaces }) as Tool);
  return tools;
}
