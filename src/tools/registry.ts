/**
 * The tool registry: every tool pincer knows, by name, with its JSON Schema
 * computed once, gathered from its tool sources (the built-in tools, and later
 * MCP servers and job tools). Which tools a given user sees is decided here
 * too, from the admin policy and the user's own permissions.
 */
import { ConfigError } from '../errors.js';
import type { ToolDefinition } from '../llm/types.js';
import type { Logger } from '../log.js';
import { isHidden } from './approval-rule.js';
import { staticRequirement } from './requirement.js';
import { toolParametersSchema, type JsonSchema } from './schema.js';
import { StaticToolSource, type SourceStatus, type ToolSource } from './source.js';
import type { ApprovalContext, Permission, PolicyMode, Tool } from './types.js';

/** Names the OpenAI-compatible APIs accept for a function. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A registered tool with its precomputed JSON Schema and the source it came from. */
export interface RegisteredTool {
  tool: Tool;
  schema: JsonSchema;
  source: string;
}

/** Who is looking at the tool list. */
export interface Viewer {
  userId: string;
  scope: string;
  approval: ApprovalContext;
}

/** Where visibility comes from: the admin policy and the user's permissions. */
export interface VisibilitySources {
  policy: { modesIn(scope: string): Promise<(tool: string) => PolicyMode> };
  permissions: { of(userId: string): Promise<(tool: string) => Permission> };
}

/** Holds the tools; see {@link createToolRegistry}. */
export interface ToolRegistry {
  /**
   * Adds a source; its tools join the registry now and follow its changes. On
   * a name two sources offer, the source added first keeps it (the other's
   * tool is left out, with a warning).
   */
  addSource(source: ToolSource): void;
  /**
   * Adds one tool to the registry's own fixed source. Throws ConfigError for a
   * bad or duplicate name or a non-object schema.
   */
  register(tool: Tool): void;
  get(name: string): RegisteredTool | undefined;
  /** Every tool, in source order, then each source's order. */
  list(): Tool[];
  names(): string[];
  /** Definitions of the tools `viewer` may see (policy- and user-disabled ones removed). */
  definitionsFor(viewer: Viewer, sources: VisibilitySources): Promise<ToolDefinition[]>;
  /** Changes whenever any source's list changes: caches of the tool list key on it. */
  revision(): string;
  /** Starts every source at once; one that fails is logged and offers no tools, the others run. */
  start(signal?: AbortSignal): Promise<void>;
  /** Stops every source. */
  stop(): Promise<void>;
  /** Each source's status, by name. */
  sourceStatuses(): Array<{ name: string } & SourceStatus>;
}

/**
 * Creates an empty registry.
 *
 * @example
 * const registry = createToolRegistry({ log });
 * registry.addSource(builtinToolSource(config, deps));
 * await registry.start();
 */
export function createToolRegistry(options: { log?: Logger } = {}): ToolRegistry {
  const sources: ToolSource[] = [];
  let own: StaticToolSource | undefined;
  let index: { revision: string; tools: Map<string, RegisteredTool> } | undefined;
  const revision = () => `${sources.length}:${sources.map((source) => source.revision()).join('.')}`;
  /** The union of the sources' tools, rebuilt only when a revision changed. */
  const current = (): Map<string, RegisteredTool> => {
    const now = revision();
    if (index?.revision !== now) index = { revision: now, tools: collect(sources, options.log) };
    return index.tools;
  };
  const registry: ToolRegistry = {
    addSource(source) {
      if (sources.some((existing) => existing.name === source.name)) throw new ConfigError([`tool source "${source.name}" is added twice`]);
      sources.push(source);
    },
    register(tool) {
      checkedEntry(tool, current(), 'registered');
      if (!own) {
        own = new StaticToolSource('registered');
        registry.addSource(own);
      }
      own.add(tool);
    },
    get: (name) => current().get(name),
    list: () => [...current().values()].map((entry) => entry.tool),
    names: () => [...current().keys()],
    async definitionsFor(viewer, visibility) {
      // The viewer's policy and permissions are read once, then every tool is decided from them.
      const [policyOf, permissionOf] = await Promise.all([visibility.policy.modesIn(viewer.scope), visibility.permissions.of(viewer.userId)]);
      const visible = (tool: Tool) =>
        !isHidden({ tool: tool.name, requirement: staticRequirement(tool), policy: policyOf(tool.name), permission: permissionOf(tool.name), context: viewer.approval });
      return [...current().values()].filter((entry) => visible(entry.tool)).map(toDefinition);
    },
    revision,
    async start(signal) {
      const results = await Promise.allSettled(sources.map((source) => source.start(signal)));
      results.forEach((result, i) => {
        if (result.status === 'rejected') options.log?.error({ err: result.reason, source: sources[i]!.name }, 'tool source failed to start; its tools are unavailable');
      });
    },
    async stop() {
      const results = await Promise.allSettled(sources.map((source) => source.stop()));
      results.forEach((result, i) => {
        if (result.status === 'rejected') options.log?.warn({ err: result.reason, source: sources[i]!.name }, 'tool source failed to stop cleanly');
      });
    },
    sourceStatuses: () => sources.map((source) => ({ name: source.name, ...source.status() })),
  };
  return registry;
}

/** Every valid tool of the sources, first source first; invalid or shadowed ones are logged and left out. */
function collect(sources: readonly ToolSource[], log: Logger | undefined): Map<string, RegisteredTool> {
  const tools = new Map<string, RegisteredTool>();
  for (const source of sources) {
    for (const tool of source.tools()) {
      try {
        tools.set(tool.name, checkedEntry(tool, tools, source.name));
      } catch (error) {
        log?.warn({ source: source.name, tool: tool.name, problem: error instanceof ConfigError ? error.issues.join('; ') : String(error) }, 'tool left out');
      }
    }
  }
  return tools;
}

function checkedEntry(tool: Tool, existing: Map<string, RegisteredTool>, source: string): RegisteredTool {
  if (!TOOL_NAME.test(tool.name)) {
    throw new ConfigError([`tool name "${tool.name}": use 1-64 letters, digits, "_" or "-"`]);
  }
  const holder = existing.get(tool.name);
  if (holder) {
    throw new ConfigError([holder.source === source ? `tool "${tool.name}" is registered twice` : `tool "${tool.name}" of ${source} has the name of a tool of ${holder.source}`]);
  }
  const schema = tool.inputSchema ?? toolParametersSchema(tool.parameters);
  if (schema.type !== 'object') {
    throw new ConfigError([`tool "${tool.name}": ${tool.inputSchema ? 'its input schema must describe an object' : 'parameters must be a zod object schema'}`]);
  }
  return { tool, schema, source };
}

function toDefinition(entry: RegisteredTool): ToolDefinition {
  return { name: entry.tool.name, description: entry.tool.description, parameters: entry.schema };
}
