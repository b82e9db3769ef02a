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
import { filesWriteTool } from './files-write.js';
import { httpFetchTool } from './http-fetch.js';
import type { ResolveHost } from './lib/address-policy.js';
import { createMemoryStore } from './lib/memory-store.js';
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

/** The workspace folder: `tools.workspaceDir`, or `<dataDir>/workspace`, as an absolute path. */
export function workspaceDirOf(config: BuiltinToolsConfig): string {
  return resolve(config.tools.workspaceDir ?? join(config.dataDir, 'workspace'));
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
  const workspaceDir = workspaceDirOf(config);
  const memory = createMemoryStore(deps.store, deps.clock);
  const tools: Tool[] = [
    timeTool(deps.clock),
    calculatorTool(),
    memoryWriteTool(memory),
    memorySearchTool(memory),
    httpFetchTool({ ...config.tools.http, resolve: deps.resolveHost }),
    filesListTool(workspaceDir),
    filesReadTool(workspaceDir),
    filesWriteTool(workspaceDir),
  ] as Tool[];
  if (config.tools.shell.enabled) tools.push(shellTool({ ...config.tools.shell, workspaceDir }) as Tool);
  return tools;
}
