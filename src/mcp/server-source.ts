/**
 * One MCP server as a tool source (SPEC section 14): its tools reach the model
 * as `<server>__<tool>` and run through the same pipeline as every tool
 * (policy, permissions, approvals, rate limits, audit, output safety).
 *
 * - stdio servers are spawned with `PATH`, `HOME` and their configured `env`
 *   only, never pincer's credentials; HTTP servers are reached with streamable
 *   HTTP, or SSE for older ones.
 * - Start is bounded; a server that fails or exits is restarted with backoff,
 *   its tools absent meanwhile (the model is never offered a dead tool), and
 *   the bot runs on. `tools/list_changed` refreshes the list, and its revision,
 *   so the next model request offers the new tools: a call whose result comes
 *   while that refresh runs waits for it (see `listing-wait.ts`).
 * - Calls have the server's time limit; /stop aborts them, which sends the
 *   protocol's cancellation.
 * - A hostile server is bounded (see `listing.ts`): its listing in pages, time
 *   and count, its change notifications in rate, its descriptions and schemas
 *   in size; what it says when a call fails reaches the model like output.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { McpLimitsSchema, type McpServerSchema } from '../config/schema.js';
import { ToolError } from '../errors.js';
import type { Logger } from '../log.js';
import { createRedactor, type Redactor } from '../safety/secrets.js';
import { StaticToolSource, type SourceState, type SourceStatus, type ToolSource } from '../tools/source.js';
import type { Tool, ToolContext } from '../tools/types.js';
import { inheritedOverrides, serverEnvironment } from '../config/mcp-environment.js';
import { boundedTools, ChangeCounter, listAllTools, ListingError, type ListedTool, type McpLimits } from './listing.js';
import { waitForListing } from './listing-wait.js';
import { modelToolNames } from './names.js';
import { resultText, serverError, type McpContent } from './results.js';
import { serverSecrets } from '../config/mcp-secrets.js';

/** A server's configuration (config `mcp.servers.<name>`). */
export type McpServerConfig = z.infer<typeof McpServerSchema>;

/** How a server is reached. */
export type McpTransportName = 'stdio' | 'streamable-http' | 'sse';

/** What a source needs besides its server's config. */
export interface McpSourceOptions {
  /** Scrubs what the server says; default: the built-in secret kinds and this server's own values. */
  redactor?: Redactor;
  /** Config `mcp.limits`; default its defaults. */
  limits?: McpLimits;
}

/** What `/mcp` shows of a server. */
export interface McpServerStatus extends SourceStatus {
  server: string;
  transport: McpTransportName;
}

/** Backoff of restarts: the first wait, doubled each time, up to the last. */
const RESTART_DELAYS_MS = { first: 1_000, max: 60_000 };
/** Lines of a stdio server's stderr kept for its last error. */
const STDERR_LINES = 5;
/** Characters of a last error shown by `/mcp` (a server's own text may be in it). */
const LAST_ERROR_CHARS = 600;

/** Arguments of an MCP tool: any object; the server validates them against its schema. */
const ARGUMENTS = z.record(z.string(), z.unknown());

/** One configured MCP server, offering its tools. */
export class McpServerSource implements ToolSource {
  readonly name: string;
  private client: Client | undefined;
  private state: SourceState = 'stopped';
  /** The tools offered now, with their revision and listeners. */
  private readonly offered = new StaticToolSource('offered');
  private lastError: string | undefined;
  private transportName: McpTransportName;
  private restartTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private stopped = false;
  private stderrTail: string[] = [];
  /** The tool listing under way, for the client it reads; a change announced meanwhile is read after it. */
  private listing: { client: Client; done: Promise<void>; again: boolean } | undefined;
  private readonly redactor: Redactor;
  private readonly limits: McpLimits;

  constructor(
    readonly server: string,
    private readonly config: McpServerConfig,
    private readonly log: Logger,
    private readonly clientVersion = '0.0.0',
    options: McpSourceOptions = {},
  ) {
    this.name = `mcp:${server}`;
    this.transportName = config.command ? 'stdio' : 'streamable-http';
    this.redactor = options.redactor ?? createRedactor(serverSecrets(config));
    this.limits = options.limits ?? McpLimitsSchema.parse({});
  }

  /** Connects within the start time; a failure is recorded and retried later, never thrown. */
  async start(): Promise<void> {
    this.stopped = false;
    const overrides = this.config.command ? inheritedOverrides(this.config.env) : [];
    // Allowed because it is written out in the config; said once, since it changes what the server runs.
    if (overrides.length) this.log.warn({ server: this.server, variables: overrides }, 'MCP server environment sets its own PATH or HOME');
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    this.setTools([]);
    this.state = 'stopped';
    await client?.close().catch(() => undefined);
  }

  /**
   * Stops this server's client and starts a new one, as at the bot's start:
   * its tools are withdrawn, then listed anew. The backoff starts over.
   */
  async restart(): Promise<void> {
    await this.stop();
    this.attempts = 0;
    this.stderrTail = [];
    await this.start();
  }

  tools(): readonly Tool[] {
    return this.offered.tools();
  }

  revision(): number {
    return this.offered.revision();
  }

  onChange(listener: () => void): () => void {
    return this.offered.onChange(listener);
  }

  status(): McpServerStatus {
    return { server: this.server, transport: this.transportName, state: this.state, tools: this.offered.tools().length, ...(this.lastError ? { lastError: this.lastError } : {}) };
  }

  private async connect(): Promise<void> {
    this.state = 'starting';
    const timeout = this.config.startTimeoutMs;
    let client: Client | undefined;
    const opening = this.open();
    try {
      client = await withTimeout(opening, timeout, `did not start within ${timeout / 1000} s`);
      const opened = client;
      this.client = opened;
      opened.onclose = () => this.lost(opened, 'the server closed the connection');
      const changes = new ChangeCounter(this.limits.maxListChangedPerMinute);
      opened.setNotificationHandler(ToolListChangedNotificationSchema, () => this.listChanged(opened, changes));
      await withTimeout(this.refresh(opened), timeout, `did not list its tools within ${timeout / 1000} s`);
      // Failed meanwhile (it closed, or broke a bound): that failure is already recorded.
      if (this.client !== opened) return;
      this.state = 'ready';
      this.attempts = 0;
      delete this.lastError;
      this.log.info({ server: this.server, transport: this.transportName, tools: this.offered.tools().length }, 'MCP server ready');
    } catch (error) {
      // A server that answers after its time is closed rather than left running unseen.
      if (!client) void opening.then((late) => late.close()).catch(() => undefined);
      const current = this.client === client;
      if (current) this.client = undefined;
      await client?.close().catch(() => undefined);
      // A client that is no longer current failed already (it closed, broke a bound, or was stopped).
      if (client && !current) return;
      this.failed(describe(error, this.stderrTail));
    }
  }

  /** A `tools/list_changed`: the tools are read again, unless the server sends too many of them. */
  private async listChanged(client: Client, changes: ChangeCounter): Promise<void> {
    if (this.client !== client) return;
    if (!changes.note()) {
      const limit = this.limits.maxListChangedPerMinute;
      await this.abandon(client, `sent more than ${limit} tools/list_changed notifications in a minute (mcp.limits.maxListChangedPerMinute)`);
      return;
    }
    try {
      await this.refresh(client);
    } catch (error) {
      if (error instanceof ListingError) await this.abandon(client, error.message);
      else this.log.warn({ err: error, server: this.server }, 'MCP tool list refresh failed');
    }
  }

  /** Opens a client over the configured transport (streamable HTTP falling back to SSE). */
  private async open(): Promise<Client> {
    const { config } = this;
    if (config.command) {
      this.transportName = 'stdio';
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: serverEnvironment(config.env),
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => this.keepStderr(chunk.toString('utf8')));
      return this.connectOver(transport);
    }
    const url = new URL(config.url!);
    const requestInit = { headers: config.headers };
    try {
      this.transportName = 'streamable-http';
      return await this.connectOver(new StreamableHTTPClientTransport(url, { requestInit }));
    } catch (error) {
      this.log.info({ server: this.server, err: error }, 'streamable HTTP failed; trying SSE');
      this.transportName = 'sse';
      return this.connectOver(new SSEClientTransport(url, { requestInit }));
    }
  }

  private async connectOver(transport: Transport): Promise<Client> {
    const client = new Client({ name: 'pincer', version: this.clientVersion }, { capabilities: {} });
    await client.connect(transport);
    return client;
  }

  /**
   * Reads the server's tools and makes them pincer tools. One listing runs at
   * a time per client: a change announced during one is read by one more after
   * it, so a burst of notifications costs at most two listings.
   */
  private refresh(client: Client): Promise<void> {
    if (this.listing?.client === client) {
      this.listing.again = true;
      return this.listing.done;
    }
    const listing = { client, again: false, done: Promise.resolve() };
    listing.done = (async () => {
      try {
        do {
          listing.again = false;
          await this.readTools(client);
        } while (listing.again && this.client === client);
      } finally {
        if (this.listing === listing) this.listing = undefined;
      }
    })();
    this.listing = listing;
    return listing.done;
  }

  private async readTools(client: Client): Promise<void> {
    const listed = await listAllTools(client, this.limits);
    if (this.client !== client) return;
    const { include, exclude } = this.config;
    const wanted = listed.filter((tool) => (!include || include.includes(tool.name)) && !exclude.includes(tool.name));
    const kept = boundedTools(this.server, wanted, this.limits, this.redactor, this.log);
    const names = modelToolNames(this.server, kept.map((tool) => tool.name));
    this.setTools(kept.map((tool, i) => this.toTool(tool, names[i]!)));
  }

  private toTool(tool: ListedTool, modelName: string): Tool {
    const approval = this.config.tools[tool.name]?.approval ?? this.config.approval;
    const rateLimit = this.config.tools[tool.name]?.rateLimit ?? this.config.rateLimit;
    return {
      name: modelName,
      description: `${tool.description ?? tool.name} (tool "${tool.name}" of the MCP server ${this.server})`,
      parameters: ARGUMENTS,
      inputSchema: objectSchema(tool.inputSchema),
      // A server's read-only hint is its own claim: its tools ask like any tool with side effects.
      readOnly: false,
      requiresApproval: () => approval,
      timeoutMs: this.config.timeoutMs + 1_000,
      ...(rateLimit ? { rateLimit } : {}),
      describe: () => `Call "${tool.name}" on the MCP server ${this.server}`,
      execute: (args, ctx) => this.call(tool.name, modelName, args as Record<string, unknown>, ctx),
    };
  }

  /** Calls a tool; whatever the server says of a failure reaches the model as untrusted data. */
  private async call(tool: string, modelName: string, args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    const client = this.client;
    if (!client || this.state !== 'ready') throw new ToolError(`the MCP server ${this.server} is not running right now; try again later.`);
    const started = Date.now();
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await client.callTool({ name: tool, arguments: args }, undefined, { signal: ctx.signal, timeout: this.config.timeoutMs });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      // Our own words for a time-out or a lost connection: a server could send those codes with any text.
      if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
        throw new ToolError(`"${tool}" on the MCP server ${this.server} timed out after ${this.config.timeoutMs / 1000} s.`);
      }
      if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
        throw new ToolError(`the MCP server ${this.server} closed the connection during the call to "${tool}".`);
      }
      throw serverError(this.server, modelName, error instanceof Error ? error.message : String(error), this.redactor);
    }
    await this.listedAfterCall(client, tool, started, ctx.signal);
    const text = resultText(result.content as McpContent[] | undefined, result.structuredContent);
    if (result.isError) throw serverError(this.server, modelName, text, this.redactor);
    return text;
  }

  /**
   * A result that arrives while the tools are being read again (the server
   * announced a change during or before it) waits for that listing, within
   * what is left of the call's time limit, so the next model request offers
   * the new list. A listing that fails or takes longer is logged; the call
   * keeps its result.
   */
  private async listedAfterCall(client: Client, tool: string, started: number, signal: AbortSignal): Promise<void> {
    const listing = this.listing;
    if (listing?.client !== client) return;
    const left = this.config.timeoutMs - (Date.now() - started);
    const outcome = await waitForListing(listing.done, left, signal);
    if (outcome === 'listed' || outcome === 'stopped') return;
    const reason = outcome === 'failed' ? 'the listing failed' : 'the listing outlasted the call\'s time limit';
    this.log.warn({ server: this.server, tool, reason }, 'MCP tool list not refreshed before the result; the next request may offer the old list');
  }

  /** Drops a client that broke a bound: closed, its tools withdrawn, restarted later. */
  private async abandon(client: Client, reason: string): Promise<void> {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    this.failed(reason);
    await client.close().catch(() => undefined);
  }

  private lost(client: Client, reason: string): void {
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    this.failed(this.stderrTail.length ? `${reason}: ${this.stderrTail.join(' | ')}` : reason);
  }

  /** Records a failure, removes the tools and schedules a restart with backoff. */
  private failed(reason: string): void {
    this.state = 'failed';
    this.lastError = reason.length > LAST_ERROR_CHARS ? `${reason.slice(0, LAST_ERROR_CHARS)}…` : reason;
    this.setTools([]);
    if (this.stopped) return;
    const delay = Math.min(RESTART_DELAYS_MS.max, RESTART_DELAYS_MS.first * 2 ** this.attempts);
    this.attempts += 1;
    this.log.warn({ server: this.server, reason, retryInMs: delay }, 'MCP server unavailable; its tools are withdrawn until it is back');
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.connect(), delay);
    this.restartTimer.unref();
  }

  private setTools(tools: Tool[]): void {
    if (!tools.length && !this.offered.tools().length) return;
    this.offered.replace(tools);
  }

  private keepStderr(text: string): void {
    for (const line of text.split('\n').map((entry) => entry.trim()).filter(Boolean)) {
      this.stderrTail.push(line.slice(0, 300));
      if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
    }
  }
}

/** A server's input schema as an object schema (some servers omit `type` or `properties`). */
function objectSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...(schema ?? {}) };
  delete copy.$schema;
  copy.type = 'object';
  copy.properties ??= {};
  return copy;
}

function describe(error: unknown, stderr: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  return stderr.length ? `${message} (${stderr.join(' | ')})` : message;
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
