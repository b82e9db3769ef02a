/**
 * Reading a server's tools within bounds (config `mcp.limits`): a server that
 * pages forever, lists too many tools, takes too long or announces changes
 * without end is failed with the reason; a tool whose schema is too large (or
 * whose name is no name) is skipped with a logged reason; a description is cut
 * to size and its injection markers are defused, since the model reads it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { McpLimitsSchema } from '../config/schema.js';
import type { Logger } from '../log.js';
import { neutraliseInjection } from '../safety/injection.js';
import type { Redactor } from '../safety/secrets.js';

/** The bounds on a server (config `mcp.limits`). */
export type McpLimits = z.infer<typeof McpLimitsSchema>;

/** One tool as a server lists it, as far as pincer reads it. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** The longest tool name the protocol allows. */
const MAX_NAME_CHARS = 128;

/** A server broke a bound of its tool listing; it is failed with this message. */
export class ListingError extends Error {
  override readonly name = 'ListingError';
}

/** Every page of the server's `tools/list`, within the page, count and time bounds. */
export async function listAllTools(client: Client, limits: McpLimits): Promise<ListedTool[]> {
  const deadline = Date.now() + limits.listTimeoutMs;
  const tooSlow = `did not list its tools within ${limits.listTimeoutMs / 1000} s`;
  const listed: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const left = deadline - Date.now();
    if (left <= 0) throw new ListingError(tooSlow);
    const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: left }).catch((error: unknown) => {
      throw error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number) ? new ListingError(tooSlow) : error;
    });
    listed.push(...(result.tools as ListedTool[]));
    if (listed.length > limits.maxTools) throw new ListingError(`listed more than ${limits.maxTools} tools (mcp.limits.maxTools)`);
    cursor = result.nextCursor;
    if (!cursor) return listed;
    if (page >= limits.maxListPages) throw new ListingError(`tools/list had more than ${limits.maxListPages} pages (mcp.limits.maxListPages); its nextCursor never ended`);
  }
}

/**
 * The tools worth offering: those with a sane name and a schema within bounds,
 * each description cut to size, free of the configured secrets and with its
 * injection markers defused.
 */
export function boundedTools(server: string, listed: readonly ListedTool[], limits: McpLimits, redactor: Redactor, log: Logger): ListedTool[] {
  const kept: ListedTool[] = [];
  for (const tool of listed) {
    const skipped = skipReason(tool, limits);
    if (skipped) {
      log.warn({ server, tool: String(tool.name).slice(0, MAX_NAME_CHARS), reason: skipped }, 'MCP tool skipped');
      continue;
    }
    kept.push({ ...tool, description: boundedDescription(tool.description, limits.maxDescriptionChars, redactor) });
  }
  return kept;
}

function skipReason(tool: ListedTool, limits: McpLimits): string | undefined {
  if (typeof tool.name !== 'string' || !tool.name || tool.name.length > MAX_NAME_CHARS) return `its name is not 1 to ${MAX_NAME_CHARS} characters`;
  const schemaChars = JSON.stringify(tool.inputSchema ?? {}).length;
  if (schemaChars > limits.maxSchemaChars) return `its input schema has ${schemaChars} characters, more than ${limits.maxSchemaChars} (mcp.limits.maxSchemaChars)`;
  return undefined;
}

function boundedDescription(description: string | undefined, maxChars: number, redactor: Redactor): string | undefined {
  if (description === undefined) return undefined;
  const cut = description.length > maxChars ? `${description.slice(0, maxChars)}… (cut)` : description;
  return neutraliseInjection(redactor.redact(cut));
}

/**
 * Counts a server's `tools/list_changed` notifications over the last minute;
 * past the bound the server is failed, since a storm of them would keep
 * pincer listing tools without end.
 */
export class ChangeCounter {
  private times: number[] = [];

  constructor(private readonly perMinute: number) {}

  /** Notes one notification; false when the server is past its bound. */
  note(now = Date.now()): boolean {
    this.times = this.times.filter((time) => now - time < 60_000);
    this.times.push(now);
    return this.times.length <= this.perMinute;
  }
}
