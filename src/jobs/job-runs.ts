/**
 * The small pieces around a job's runs: how its questions and its
 * conversation are keyed, the host that asks them, the texts a run leaves in the job's
 * conversation, and what a crash leaves to report.
 */
import type { ApprovalResumption } from '../engine/approval-flow.js';
import type { PendingApproval } from '../engine/approval-book.js';
import { failureMessage } from '../engine/failures.js';
import type { ChatInfo } from '../channels/types.js';
import { UsageLimitError } from '../errors.js';
import { unfinishedToolSteps, type JobRecord, type RunningJob } from './job.js';

/** What a tool result says about a call that a restart interrupted. */
export const INTERRUPTED_RESULT = 'Error: this call was interrupted by a restart of the bot; it was not run again. Check whether it took effect before relying on it.';

/** Tool results for an approval that did not approve. */
export const NOT_APPROVED: Record<Exclude<ApprovalResumption['kind'], 'approved'>, string> = {
  denied: 'Not run: the job\'s owner denied this call.',
  expired: 'Not run: the approval request expired, which counts as a denial.',
  superseded: 'Not run: the job\'s owner did not approve this call.',
  loop: 'Not run: the job\'s owner did not approve this call.',
};

/** How the scheduler asks the job's owner (the approval flow), and where it tracks background work. */
export interface JobHost {
  /** Shows the question; false when it could not be shown. */
  ask(approval: PendingApproval): Promise<boolean>;
  /** Ends a job's open question (the job was cancelled). */
  cancelQuestion(threadKey: string, by: string): Promise<void>;
}

/** The key of a job's questions in the approval book, and of its conversation in the thread log. */
export function jobThreadKey(jobId: string): string {
  return `job:${jobId}`;
}

/**
 * Reports the tool calls a crash interrupted, so that the model knows and
 * nothing runs twice; a plan step that may have run is not run again (the
 * loop takes over from its result).
 */
export function reportInterrupted(job: RunningJob): void {
  for (const step of unfinishedToolSteps(job)) {
    step.status = 'interrupted';
    const planned = /^plan_.+_(\d+)$/.exec(step.callId ?? '');
    if (planned && job.planSteps?.[Number(planned[1]) - 1]) {
      job.planSteps[Number(planned[1]) - 1]!.status = 'failed';
      job.planState = 'abandoned';
    }
    if (step.callId && !hasResult(job, step.callId)) job.messages.push({ role: 'tool', toolCallId: step.callId, content: INTERRUPTED_RESULT });
  }
}

/** Whether the job's conversation holds the result of call `callId`. */
export function hasResult(job: RunningJob, callId: string): boolean {
  return job.messages.some((message) => message.role === 'tool' && message.toolCallId === callId);
}

/**
 * Whether a job stored as waiting for its owner was running the call its
 * owner approved when the process died: an earlier version ran approved calls
 * without leaving that state.
 */
export function approvedCallInterrupted(job: JobRecord): boolean {
  return job.state === 'waiting_approval' && unfinishedToolSteps(job).length > 0;
}

/** What a repaired job's model is told. */
export const REPAIR_NOTE = 'The previous attempt at this job ran out of time. Continue from where it stopped, more directly: skip what is done, and finish with "DONE:" and a report, or "FAILED:" and the reason.';

/** The owner's DM with the bot: the job's origin when it is one. */
export function ownerDm(job: JobRecord): ChatInfo | undefined {
  return job.origin.kind === 'dm' ? job.origin : undefined;
}

/** What the model reads of a call a stop cut short (a restart, the job's time running out, a cancel): it is not run again. */
export function stoppedCallResult(reason: unknown): string {
  const why = reason === 'timeout' ? 'the job ran out of time' : reason === 'cancel' ? 'the job was cancelled' : 'the bot was stopping';
  return `Error: this call was interrupted (${why}); it was not run again. Check whether it took effect before relying on it.`;
}

/** Why a run stopped, in the words of a job's result. */
export function stopText(reason: unknown): string {
  return reason === 'timeout' ? 'it timed out' : reason === 'cancel' ? 'cancelled' : 'it was stopped';
}

/** Why a job failed, in the words a person reads (details stay in the logs). */
export function jobFailure(error: unknown, job: JobRecord): string {
  if (error instanceof UsageLimitError) return `${job.ownerName} reached today's usage limit ($${error.limitUsd.toFixed(2)})`;
  return failureMessage(error).replace(/^Sorry, /, '').replace(/\.$/, '');
}
