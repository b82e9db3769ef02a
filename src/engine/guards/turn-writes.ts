/**
 * Which workspace files the current turn wrote, read from the conversation
 * itself, so that it holds after an approval or a restart resumed the turn:
 * the successful `files_write` calls since the previous answer.
 */
import { posix } from 'node:path';
import type { ChatMessage } from '../../llm/types.js';

/** The tool whose calls change workspace files. */
const WRITE_TOOL = 'files_write';
/** Tools that may change files without saying which. */
const OPAQUE_WRITERS = new Set(['shell']);

/** What the turn wrote. */
export interface TurnWrites {
  /** Workspace-relative paths written, normalised. */
  files: Set<string>;
  /** A tool that can change files without saying which ran (a shell). */
  opaque: boolean;
}

/**
 * Workspace-relative paths (normalised: no `./`, forward slashes) written by
 * successful `files_write` calls after the last assistant message without tool
 * calls. A result that starts with "Error" (after the untrusted-data wrapper)
 * did not write.
 */
export function filesWrittenThisTurn(messages: readonly ChatMessage[]): TurnWrites {
  const results = new Map<string, string>();
  const written = new Set<string>();
  let opaque = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'tool') {
      results.set(message.toolCallId, message.content);
      continue;
    }
    if (message.role !== 'assistant') continue;
    if (!message.toolCalls?.length) break;
    for (const call of message.toolCalls) {
      if (OPAQUE_WRITERS.has(call.name)) opaque = true;
      if (call.name !== WRITE_TOOL) continue;
      const result = results.get(call.id);
      const path = pathOf(call.arguments);
      if (path !== undefined && result !== undefined && succeeded(result)) written.add(normaliseWorkspacePath(path));
    }
  }
  return { files: written, opaque };
}

/** `./a/b.txt`, `a//b.txt` and `a\b.txt` all become `a/b.txt`. */
export function normaliseWorkspacePath(path: string): string {
  const normal = posix.normalize(path.trim().replace(/\\/g, '/'));
  return normal.replace(/^(\.\/)+/, '').replace(/^\/+/, '').replace(/\/+$/, '');
}

function pathOf(raw: string): string | undefined {
  try {
    const args: unknown = JSON.parse(raw);
    const path = args && typeof args === 'object' ? (args as { path?: unknown }).path : undefined;
    return typeof path === 'string' && path.trim() ? path : undefined;
  } catch {
    return undefined;
  }
}

function succeeded(result: string): boolean {
  // The body of a wrapped result starts after the block's first two lines (the tag and the notice).
  const body = result.startsWith('<tool_output') ? result.split('\n').slice(2).join('\n') : result;
  return !/^\s*error\b/i.test(body);
}
