/**
 * Tool sources: where the registry's tools come from. The built-in tools are
 * one source; MCP servers and background-job tools are others. A source may
 * change its list while the bot runs (an MCP server restarts, or sends
 * `tools/list_changed`): its revision changes with it, and the registry and the
 * delegate's cached tool list key on the revisions, so the next model request
 * offers the current tools and never a tool whose source is down.
 */
import type { Tool } from './types.js';

/** Where a source is in its life. */
export type SourceState = 'starting' | 'ready' | 'failed' | 'stopped';

/** What `/mcp` and health checks show of a source. */
export interface SourceStatus {
  state: SourceState;
  /** Tools it offers now. */
  tools: number;
  /** The last failure, in plain words. */
  lastError?: string;
  /** How it is reached (`stdio`, `streamable-http`...), where that means something. */
  transport?: string;
}

/** A provider of tools; see the module comment. */
export interface ToolSource {
  /** `builtin`, `mcp:<server>`, `jobs`... Unique per registry. */
  readonly name: string;
  /** Connects or spawns what it needs. A failure leaves the source without tools, not the bot down. */
  start(signal?: AbortSignal): Promise<void>;
  /** Releases what it holds; its tools are gone afterwards. */
  stop(): Promise<void>;
  /** The tools it offers now (none while it is down). */
  tools(): readonly Tool[];
  /** Changes whenever the list of tools changes. */
  revision(): number;
  /** Calls `listener` after each change of the list; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  status(): SourceStatus;
}

/**
 * A source that holds its list itself: the built-in tools, or tools an
 * embedding application passes in. `add` and `replace` change the list (and
 * its revision), for sources built on it whose tools come and go.
 */
export class StaticToolSource implements ToolSource {
  private list: Tool[];
  private version = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly name: string,
    tools: readonly Tool[] = [],
  ) {
    this.list = [...tools];
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  tools(): readonly Tool[] {
    return this.list;
  }

  revision(): number {
    return this.version;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): SourceStatus {
    return { state: 'ready', tools: this.list.length };
  }

  /** Adds a tool to the list. */
  add(tool: Tool): void {
    this.replace([...this.list, tool]);
  }

  /** Replaces the whole list. */
  replace(tools: readonly Tool[]): void {
    this.list = [...tools];
    this.version += 1;
    for (const listener of this.listeners) listener();
  }
}
