/**
 * What a job's run hands its delegate and its plan: the worker's signal, the
 * owner's mailbox, and how the run is saved: the conversation's new messages
 * to its log and the record's small fields (its step journal) in one store
 * operation, so that a crash finds no step done whose result is missing.
 */
import type { AgentServices } from '../engine/services.js';
import type { JobRunControl } from './delegate.js';
import type { JobRecord, RunningJob } from './job.js';
import type { JobStore } from './job-store.js';
import type { JobMailbox } from './mailbox.js';
import type { JobProgress } from './progress.js';
import { ownerAdmitted } from './owner-access.js';

/** Copies what a run changed of its job's small fields into the stored record. */
export function keepRun(record: JobRecord, job: RunningJob): void {
  record.steps = job.steps;
  record.stepCount = job.stepCount;
  if (job.planSteps) record.planSteps = job.planSteps;
  if (job.planState) record.planState = job.planState;
  // Taken up by the run (see takeAnswer).
  if (!job.answer) delete record.answer;
}

/** Saves a run: its new messages and its record's fields, in one store operation. */
export async function saveRun(jobs: JobStore, job: RunningJob): Promise<void> {
  await jobs.saveConversation(job, job.messages, (record) => keepRun(record, job));
}

/** The control of one run of `job`. */
export function runControl(services: AgentServices, jobs: JobStore, job: RunningJob, signal: AbortSignal, progress?: JobProgress, mailbox?: JobMailbox): JobRunControl {
  return {
    signal,
    askOwner: services.config.jobs.askOwner,
    ownerAdmitted: () => ownerAdmitted(services.outbox, job.owner, job.origin),
    takeMessages: async () => {
      // The store is the job's mailbox: `message` writes there, a step takes what arrived (read only when there may be mail).
      if (mailbox && !mailbox.shouldRead(job.id)) return [];
      const stored = await jobs.get(job.id);
      if (!stored?.inbox.length) return [];
      let taken: string[] = [];
      await jobs.update(job.id, (record) => {
        taken = record.inbox;
        record.inbox = [];
      });
      return taken;
    },
    save: () => saveRun(jobs, job),
    activity: (what: string) => {
      job.activity = what;
      void progress?.update(job);
    },
  };
}
