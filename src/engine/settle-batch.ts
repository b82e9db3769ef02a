/**
 * How a batch of tool calls settles into a conversation, the same for a chat
 * turn and a job step.
 */
import type { CallResult } from '../tools/types.js';
import type { ObservedCall } from './guards/loop-detector.js';
import type { BatchOutcome, LoopContext } from './loop.js';

/**
 * Appends the results of a batch's settled calls to the conversation and says
 * how the batch went; the calls waiting for a person are returned apart.
 */
export function settleBatch(results: readonly CallResult[], ctx: LoopContext): { batch: BatchOutcome<never>; waiting: CallResult[] } {
  const waiting = results.filter((result) => result.status === 'needs_approval');
  const settled = results.filter((result) => result.status !== 'needs_approval');
  for (const result of settled) ctx.messages.push({ role: 'tool', toolCallId: result.call.id, content: result.content });
  const batch = {
    allFailed: settled.length > 0 && settled.every((r) => r.status === 'error' || r.status === 'rejected'),
    allSucceeded: settled.length > 0 && settled.every((r) => r.status === 'ok'),
    calls: settled.map(observedCall),
  };
  return { batch, waiting };
}

/** A settled call as the loop detectors see it. */
function observedCall(result: CallResult): ObservedCall {
  const ok = result.status === 'ok';
  const call: ObservedCall = { name: result.call.name, arguments: result.call.arguments, ok };
  if (!ok) call.error = firstLine(result.content);
  return call;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((candidate) => candidate.trim() && !candidate.startsWith('<tool_output')) ?? '';
  return line.trim().slice(0, 120);
}
