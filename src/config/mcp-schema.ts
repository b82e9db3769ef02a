/**
 * The `mcp` part of the configuration schema (SPEC section 14): the servers
 * and the bounds a hostile server meets.
 */
import { z } from 'zod';
import { isRefusedVariable } from './mcp-environment.js';
import { httpUrl } from './url.js';

const ApprovalModeSchema = z.enum(['never', 'unlessAutoApproved', 'always']);
/** Calls one user may make of a tool in a minute and in an hour. */
const RateLimitSchema = z.strictObject({ perMinute: z.number().int().positive().optional(), perHour: z.number().int().positive().optional() });

/** One MCP server: a command to spawn (stdio) or a URL (streamable HTTP, falling back to SSE). */
export const McpServerSchema = z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    /**
     * The server's whole environment besides PATH and HOME: pincer's own variables are never passed.
     * Values may reference the environment as `${VAR}`; loader variables (NODE_OPTIONS, LD_PRELOAD...) are refused.
     */
    env: z
      .record(z.string(), z.string())
      .default({})
      .superRefine((env, ctx) => {
        for (const key of Object.keys(env)) {
          if (isRefusedVariable(key)) ctx.addIssue({ code: 'custom', path: [key], message: `${key} changes how the server loads code and is not passed to MCP servers` });
        }
      }),
    cwd: z.string().optional(),
    url: httpUrl().optional(),
    /** Values may reference the environment as `${VAR}`. */
    headers: z.record(z.string(), z.string()).default({}),
    /** Only these tools (by the server's names); default all. */
    include: z.array(z.string()).optional(),
    exclude: z.array(z.string()).default([]),
    approval: ApprovalModeSchema.default('unlessAutoApproved'),
    /** Each of its tools' calls per user; default none. */
    rateLimit: RateLimitSchema.optional(),
    /** Per tool (by the server's name): `{ approval, rateLimit }`, each overriding the server's. */
    tools: z.record(z.string(), z.strictObject({ approval: ApprovalModeSchema.optional(), rateLimit: RateLimitSchema.optional() })).default({}),
    /** One call's time limit. */
    timeoutMs: z.number().int().positive().default(60_000),
    /** How long the server has to start and list its tools. */
    startTimeoutMs: z.number().int().positive().default(20_000),
  })
  .refine((server) => Boolean(server.command) !== Boolean(server.url), { message: 'give either command (a stdio server) or url (an HTTP server), not both' });

/** Bounds on what a server may send (SPEC section 14: a hostile server is bounded). */
export const DEFAULT_MCP_LIMITS = {
  maxListPages: 20,
  listTimeoutMs: 15_000,
  maxTools: 256,
  maxListChangedPerMinute: 30,
  maxDescriptionChars: 1_000,
  maxSchemaChars: 20_000,
} as const;

/** The bounds of {@link DEFAULT_MCP_LIMITS}; a server past one of the listing bounds is failed with the reason. */
export const McpLimitsSchema = z.strictObject({
  /** Pages of one `tools/list` (a server whose `nextCursor` never ends is failed). */
  maxListPages: z.number().int().min(1).max(1_000).default(DEFAULT_MCP_LIMITS.maxListPages),
  /** Time to read every page of one `tools/list`. */
  listTimeoutMs: z.number().int().min(100).default(DEFAULT_MCP_LIMITS.listTimeoutMs),
  /** Tools one server may list. */
  maxTools: z.number().int().min(1).max(10_000).default(DEFAULT_MCP_LIMITS.maxTools),
  /** `tools/list_changed` notifications one server may send in a minute. */
  maxListChangedPerMinute: z.number().int().min(1).default(DEFAULT_MCP_LIMITS.maxListChangedPerMinute),
  /** Characters of a tool's description offered to the model; the rest is cut. */
  maxDescriptionChars: z.number().int().min(50).default(DEFAULT_MCP_LIMITS.maxDescriptionChars),
  /** Characters of a tool's input schema (as JSON); a tool with a larger one is skipped, with a logged reason. */
  maxSchemaChars: z.number().int().min(100).default(DEFAULT_MCP_LIMITS.maxSchemaChars),
});

/** MCP tool servers (SPEC section 14). */
export const McpConfigSchema = z.strictObject({
  limits: McpLimitsSchema.default(McpLimitsSchema.parse({})),
  servers: z.record(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'server names: 1-32 letters, digits, _ or -'), McpServerSchema).default({}),
});

