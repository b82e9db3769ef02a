/**
 * Running one batch of tool calls: calls beyond `agent.maxToolCallsPerBatch`
 * are refused without running (each still gets a result, as the model expects
 * one per call); calls that need approval or are rejected are resolved without
 * running; the runnable ones run in parallel, bounded by
 * `agent.toolConcurrency`; results come back in call order.
 */
import pLimit from 'p-limit';
import type { ToolCall } from '../llm/types.js';
import type { PipelineCore } from './pipeline-core.js';
import type { CallResult, RunOptions, ToolContext } from './types.js';

/** The result text of a call beyond the bound. */
export function tooManyCallsMessage(maxCalls: number): string {
  return `Error: too many calls in one batch, at most ${maxCalls}; this call did not run. Make the calls that matter most first, then the rest in the next step.`;
}

/** Runs `calls` through `core` as one batch. */
export async function runBatch(core: PipelineCore, calls: ToolCall[], ctx: ToolContext, options: RunOptions): Promise<CallResult[]> {
  // A model that asks for hundreds of calls at once would otherwise run them all before anyone can stop it.
  const allowed = calls.slice(0, core.maxCalls);
  const refused = calls.slice(core.maxCalls).map((call) => core.refuse(call, ctx, tooManyCallsMessage(core.maxCalls)));
  const prepared = await Promise.all(allowed.map((call) => core.prepare(call, ctx, options)));
  const limit = pLimit(Math.max(1, core.concurrency));
  return Promise.all([
    ...prepared.map((item) => {
      if ('status' in item) return item;
      return limit(() => core.runPrepared(item, ctx, options));
    }),
    ...refused,
  ]);
}
