/**
 * The tool registry: every tool pincer knows, by name, with its JSON Schema
 * computed once. Which tools a given user sees is decided here too, from the
 * admin policy and the user's own permissions.
 */
import { ConfigError } from '../errors.js';
import type { ToolDefinition } from '../llm/types.js';
import { isHidden } from './approval-rule.js';
import { staticRequirement } from './requirement.js';
import { toolParametersSchema, type JsonSchema } from './schema.js';
import type { ApprovalContext, Permission, PolicyMode, Tool } from './types.js';

/** Names the OpenAI-compatible APIs accept for a function. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A registered tool with its precomputed JSON Schema. */
export interface RegisteredTool {
  tool: Tool;
  schema: JsonSchema;
}

/** Who is looking at the tool list. */
export interface Viewer {
  userId: string;
  scope: string;
  approval: ApprovalContext;
}

/** Where visibility comes from: the admin policy and the user's permissions. */
export interface VisibilitySources {
  policy: { effective(tool: string, scope: string): Promise<PolicyMode> };
  permissions: { get(userId: string, tool: string): Promise<Permission> };
}

/** Holds the tools; see {@link createToolRegistry}. */
export interface ToolRegistry {
  /** Adds a tool. Throws ConfigError for a bad or duplicate name or a non-object schema. */
  register(tool: Tool): void;
  get(name: string): RegisteredTool | undefined;
  /** Every tool, in registration order. */
  list(): Tool[];
  names(): string[];
  /** Definitions of the tools `viewer` may see (policy- and user-disabled ones removed). */
  definitionsFor(viewer: Viewer, sources: VisibilitySources): Promise<ToolDefinition[]>;
}

/**
 * Creates an empty registry.
 *
 * @example
 * const registry = createToolRegistry();
 * for (const tool of builtinTools(config, deps)) registry.register(tool);
 */
export function createToolRegistry(): ToolRegistry {
  const tools = new Map<string, RegisteredTool>();
  return {
    register(tool) {
      tools.set(tool.name, checkedEntry(tool, tools));
    },
    get: (name) => tools.get(name),
    list: () => [...tools.values()].map((entry) => entry.tool),
    names: () => [...tools.keys()],
    async definitionsFor(viewer, sources) {
      const entries = [...tools.values()];
      const visible = await Promise.all(entries.map((entry) => isVisible(entry.tool, viewer, sources)));
      return entries.filter((_, i) => visible[i]).map(toDefinition);
    },
  };
}

function checkedEntry(tool: Tool, existing: Map<string, RegisteredTool>): RegisteredTool {
  if (!TOOL_NAME.test(tool.name)) {
    throw new ConfigError([`tool name "${tool.name}": use 1-64 letters, digits, "_" or "-"`]);
  }
  if (existing.has(tool.name)) throw new ConfigError([`tool "${tool.name}" is registered twice`]);
  const schema = toolParametersSchema(tool.parameters);
  if (schema.type !== 'object') {
    throw new ConfigError([`tool "${tool.name}": parameters must be a zod object schema`]);
  }
  return { tool, schema };
}

async function isVisible(tool: Tool, viewer: Viewer, sources: VisibilitySources): Promise<boolean> {
  const [policy, permission] = await Promise.all([
    sources.policy.effective(tool.name, viewer.scope),
    sources.permissions.get(viewer.userId, tool.name),
  ]);
  const requirement = staticRequirement(tool);
  return !isHidden({ tool: tool.name, requirement, policy, permission, context: viewer.approval });
}

function toDefinition(entry: RegisteredTool): ToolDefinition {
  return { name: entry.tool.name, description: entry.tool.description, parameters: entry.schema };
}
