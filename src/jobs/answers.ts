/**
 * A job's questions to its owner and their answers. A question is recorded
 * in the approval book with the job as its work (its answer resumes the job,
 * not a chat turn); the answer is stored in the job's record in the same
 * write that puts it back to `in_progress`, and its next run takes it up
 * first: the approved call runs through the engine's one approved-call path,
 * with the run's own signal (cancel, the job's time, shutdown), journaled as
 * started before and finished after.
 */
import { newApproval, type PendingApproval } from '../engine/approval-book.js';
import type { ApprovalResumption } from '../engine/approval-flow.js';
import { runApprovedCall } from '../engine/approved-call.js';
import type { AgentServices } from '../engine/services.js';
import { toolResult } from '../llm/call-ids.js';
import type { CallResult } from '../tools/types.js';
import type { JobDelegate } from './delegate.js';
import { finishStep, journalStep, type JobRecord, type RunningJob } from './job.js';
import { hasResult, jobThreadKey, NOT_APPROVED, ownerDm, stoppedCallResult } from './job-runs.js';

/** The result of a call asked about later, one call at a time. */
export const ASKED_LATER = 'Not run: asked again on the next step, one call at a time.';

/** The question about `first` to the job's owner, in their DM (undefined when the job was created elsewhere). */
export function jobQuestion(job: JobRecord, first: CallResult, reason: string, timeoutMs: number): PendingApproval | undefined {
  const chat = ownerDm(job);
  if (!chat) return undefined;
  return newApproval(
    {
      threadKey: jobThreadKey(job.id),
      work: { kind: 'job', id: job.id },
      chat,
      requester: { id: job.owner.slice(job.owner.indexOf(':') + 1), name: job.ownerName },
      userId: job.owner,
      call: first.call,
      deferred: [],
      view: first.approval,
      reason: `Job ${job.id} "${job.title}" wants to run this. ${reason}`.trim(),
    },
    timeoutMs,
  );
}

/** The answer as the job's record keeps it until its next run. */
export function answerOf(approval: PendingApproval, how: ApprovalResumption): NonNullable<JobRecord['answer']> {
  return { call: approval.call, outcome: how.kind, deferred: approval.deferred };
}

/**
 * Takes up the owner's answer at the start of a run: the approved call runs
 * (stopped by `signal`), a refusal becomes its result. `save` writes the run
 * (conversation, then record). An answer whose result is already in the
 * conversation (the process died between the two writes) is not applied twice.
 */
export async function takeAnswer(job: RunningJob, delegate: JobDelegate, services: AgentServices, signal: AbortSignal, save: () => Promise<void>): Promise<void> {
  const answer = job.answer;
  if (!answer) return;
  delete job.answer;
  const later = answer.deferred.map((call) => toolResult(call, ASKED_LATER));
  if (hasResult(job, answer.call.id)) return save();
  if (answer.outcome !== 'approved') {
    job.messages.push(toolResult(answer.call, NOT_APPROVED[answer.outcome]), ...later);
    return save();
  }
  let step = 0;
  await runApprovedCall(services.pipeline, answer.call, delegate.toolContext(), {
    started: async (call) => {
      step = journalStep(job, { kind: 'tool', tool: call.name, callId: call.id, status: 'started' });
      await save();
    },
    finished: async (result) => {
      if (signal.aborted && result.status !== 'ok') result.content = stoppedCallResult(signal.reason);
      finishStep(job, step, result.status === 'ok' ? 'done' : 'failed');
      job.messages.push(toolResult(answer.call, result.content), ...later);
      await save();
    },
  });
}
