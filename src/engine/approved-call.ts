/**
 * Running a call its requester approved, for whatever paused to ask: a chat
 * turn or a background job. The call is journaled as started before it runs,
 * so that a crash during it is found at the next start and reported to the
 * model as interrupted (never run again, never waited on forever); it runs
 * through the tool pipeline with the work's own abort signal (a stop, a
 * cancel, the work's time running out) and the tool's time limit; then it is
 * journaled as finished.
 */
import type { ToolCall } from '../llm/types.js';
import type { CallResult, ToolContext, ToolPipeline } from '../tools/types.js';

/** How the work that asked records its approved call; each write must be durable when it resolves. */
export interface ApprovedCallJournal {
  /** Before the call runs: a crash from now on leaves the call reported as interrupted. */
  started(call: ToolCall): Promise<void>;
  /** Once the call returned (ran, failed, timed out or was stopped), with its result. */
  finished(result: CallResult): Promise<void>;
}

/**
 * Runs `call`, approved, with `ctx.signal` (the work's: aborting it stops the
 * call) and the tool's timeout, between the two journal writes.
 */
export async function runApprovedCall(pipeline: Pick<ToolPipeline, 'run'>, call: ToolCall, ctx: ToolContext, journal: ApprovedCallJournal): Promise<CallResult> {
  await journal.started(call);
  const result = await pipeline.run(call, ctx, { approved: true });
  await journal.finished(result);
  return result;
}
