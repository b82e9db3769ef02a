/**
 * Running a tool with a time limit and cancellation. The tool gets its own
 * AbortSignal that fires when the turn is stopped or the time is up, so it can
 * stop its work (close a socket, kill a process); the pipeline does not wait
 * for a tool that ignores the signal.
 */
import { ToolError } from '../../errors.js';
import type { Tool, ToolContext } from '../types.js';

/** Used when a tool does not set `timeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** The tool's text, or the error text the model reads. */
export type ExecuteOutcome = { ok: true; output: string } | { ok: false; content: string; error?: unknown };

/** Runs `tool` with `params`, bounded by its timeout and `ctx.signal`. */
export async function executeTool(tool: Tool, params: unknown, ctx: ToolContext): Promise<ExecuteOutcome> {
  const timeoutMs = tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const controller = new AbortController();
  let timedOut = false;
  let onStop: (() => void) | undefined;
  const stopped = new Promise<'stopped'>((resolve) => {
    onStop = () => resolve('stopped');
  });
  const stop = () => {
    controller.abort(ctx.signal.reason);
    onStop?.();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('tool timed out'));
    onStop?.();
  }, timeoutMs);
  ctx.signal.addEventListener('abort', stop, { once: true });
  if (ctx.signal.aborted) stop();
  try {
    const work = Promise.resolve().then(() => tool.execute(params, { ...ctx, signal: controller.signal }));
    const outcome = await Promise.race([work, stopped]);
    if (outcome === 'stopped') {
      work.catch(() => undefined);
      return { ok: false, content: timedOut ? timeoutMessage(tool.name, timeoutMs) : `Error: the call to "${tool.name}" was cancelled.` };
    }
    return { ok: true, output: asText(outcome) };
  } catch (error) {
    if (timedOut) return { ok: false, content: timeoutMessage(tool.name, timeoutMs), error };
    if (controller.signal.aborted) return { ok: false, content: `Error: the call to "${tool.name}" was cancelled.`, error };
    return { ok: false, content: failureMessage(tool.name, error), error };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', stop);
  }
}

/** `Error: "x" timed out after 60 s and was stopped.` */
export function timeoutMessage(tool: string, timeoutMs: number): string {
  const span = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 100) / 10} s`;
  return `Error: "${tool}" timed out after ${span} and was stopped.`;
}

/** A ToolError's message as written; any other failure as `Error: "x" failed: ...`. */
export function failureMessage(tool: string, error: unknown): string {
  if (error instanceof ToolError) {
    return error.modelMessage.startsWith('Error:') ? error.modelMessage : `Error: ${error.modelMessage}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `Error: "${tool}" failed: ${message || 'unknown error'}`;
}

function asText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined || output === null) return '';
  try {
    return JSON.stringify(output);
  } catch {
    return String(output);
  }
}
