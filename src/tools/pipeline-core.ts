/**
 * The pipeline's two phases as a contract: pipeline.ts implements it and
 * batch.ts drives it, so neither file imports the other's module for a type.
 */
import type { ToolCall } from '../llm/types.js';
import type { RegisteredTool } from './registry.js';
import type { Params } from './stages/normalize.js';
import type { CallResult, RunOptions, ToolContext } from './types.js';

/** A call that passed the deciding stages and may run. */
export interface PreparedCall {
  call: ToolCall;
  entry: RegisteredTool;
  params: Params;
  started: number;
}

/** The two phases of the pipeline, shared with the batch runner. */
export interface PipelineCore {
  /** Finds the tool, normalises the arguments and decides: a call that may run, or its result. */
  prepare(call: ToolCall, ctx: ToolContext, options: RunOptions): Promise<PreparedCall | CallResult>;
  /** Runs a prepared call through the remaining stages to its result. */
  runPrepared(prepared: PreparedCall, ctx: ToolContext, options: RunOptions): Promise<CallResult>;
  /** Prepared calls of one batch that may run at once (`agent.toolConcurrency`). */
  concurrency: number;
  /** Calls one batch may make (`agent.maxToolCallsPerBatch`); those beyond it are refused. */
  maxCalls: number;
  /** The result of a call refused without running (its audit record written). */
  refuse(call: ToolCall, ctx: ToolContext, content: string): Promise<CallResult>;
}
