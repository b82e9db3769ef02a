/**
 * Before-tool hooks: code that sees each call just before it runs and may
 * reject it or rewrite its arguments (for instance to pin a parameter or block
 * a pattern). Hooks see sensitive values redacted.
 */
import type { ToolCall } from '../../llm/types.js';
import type { ToolContext } from '../types.js';
import type { Params } from './normalize.js';
import { redactParams, restoreSensitive } from './sensitive.js';

/** What a hook returns: reject with a reason, replace the arguments, or nothing to let the call go on. */
export type BeforeToolHookResult = { reject: string } | { params: Params } | undefined | void;

/** A hook run before every tool call. */
export type BeforeToolHook = (
  call: ToolCall,
  params: Params,
  ctx: ToolContext,
) => BeforeToolHookResult | Promise<BeforeToolHookResult>;

/** Arguments to run with, or the result the model reads. */
export type HookOutcome =
  | { ok: true; params: Params; rewritten: boolean }
  | { ok: false; status: 'rejected' | 'error'; content: string; error?: unknown };

/** Runs the hooks in order; the first rejection wins, rewrites accumulate. A throwing hook blocks the call. */
export async function runBeforeHooks(
  hooks: readonly BeforeToolHook[],
  call: ToolCall,
  params: Params,
  ctx: ToolContext,
  sensitive: readonly string[] | undefined,
): Promise<HookOutcome> {
  let current = params;
  let rewritten = false;
  for (const hook of hooks) {
    let result: BeforeToolHookResult;
    try {
      result = await hook(call, redactParams(current, sensitive), ctx);
    } catch (error) {
      return { ok: false, status: 'error', content: `Error: a safety check failed, so "${call.name}" did not run.`, error };
    }
    if (!result) continue;
    if ('reject' in result) {
      return { ok: false, status: 'rejected', content: `Error: "${call.name}" was blocked: ${result.reject}` };
    }
    current = restoreSensitive(current, result.params, sensitive);
    rewritten = true;
  }
  return { ok: true, params: current, rewritten };
}
