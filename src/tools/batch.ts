/**
 * Running one batch of tool calls: calls that need approval or are rejected are
 * resolved without running; the runnable ones run in parallel, bounded by
 * `agent.toolConcurrency`; results come back in call order.
 */
import pLimit from 'p-limit';
import type { ToolCall } from '../llm/types.js';
import type { PipelineCore } from './pipeline-core.js';
import type { CallResult, RunOptions, ToolContext } from './types.js';

/** Runs `calls` through `core` as one batch. */
export async function runBatch(core: PipelineCore, calls: ToolCall[], ctx: ToolContext, options: RunOptions): Promise<CallResult[]> {
  const prepared = await Promise.all(calls.map((call) => core.prepare(call, ctx, options)));
  const limit = pLimit(Math.max(1, core.concurrency));
  return Promise.all(
    prepared.map((item) => {
      if ('status' in item) return item;
      return limit(() => core.runPrepared(item, ctx, options));
    }),
  );
}
