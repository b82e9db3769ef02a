/**
 * A background job (SPEC section 12): work that goes on after the turn that
 * asked for it. The record is everything a worker needs to run it, and to
 * resume it after a restart: a journal of its steps, its plan, its owner's
 * answer; its conversation with the model is a thread log of its own. Its state changes only along the transition table below.
 */
import { z } from 'zod';
import { ChatMessageSchema, ChatRecordSchema, ToolCallSchema } from '../engine/history.js';
import type { ChatMessage } from '../llm/types.js';
import { JobFileSchema, type JobFile } from './files.js';

/** Where a job is in its life. */
export const JOB_STATES = ['pending', 'in_progress', 'waiting_approval', 'completed', 'failed', 'stuck', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** States a job never leaves. */
export const FINAL_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed', 'cancelled']);

/** States of a job that has not ended: it counts against its owner's `jobs.maxActivePerUser`. */
export const OPEN_STATES: readonly JobState[] = JOB_STATES.filter((state) => !FINAL_STATES.has(state));

/**
 * The legal transitions (SPEC 12): `pending` starts; `in_progress` and
 * `waiting_approval` go back and forth; a running job ends completed, failed,
 * stuck or cancelled; a stuck one is repaired (back to `in_progress`) or fails.
 * A pending or waiting job may be cancelled or fail (it cannot start, its
 * approval cannot be asked) without running again.
 */
export const JOB_TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  pending: ['in_progress', 'cancelled', 'failed'],
  in_progress: ['waiting_approval', 'completed', 'failed', 'stuck', 'cancelled'],
  waiting_approval: ['in_progress', 'cancelled', 'failed'],
  stuck: ['in_progress', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Whether a job in `from` may go to `to`. */
export function canTransition(from: JobState, to: JobState): boolean {
  return JOB_TRANSITIONS[from].includes(to);
}

/** One journaled step: a model call or a tool call, started and (once it returned) done. */
export const JobStepSchema = z.object({
  n: z.number().int(),
  kind: z.enum(['model', 'tool', 'plan', 'check']),
  /** The tool's name and call id, for a tool step. */
  tool: z.string().optional(),
  callId: z.string().optional(),
  status: z.enum(['started', 'done', 'failed', 'interrupted']),
  at: z.number(),
});
export type JobStep = z.infer<typeof JobStepSchema>;

/**
 * Finished steps kept in the record; older ones are only counted. The record
 * is rewritten at every step, so the journal stays short: what a restart needs
 * of it is the steps started and never finished, which are always kept.
 */
export const MAX_JOURNALED_STEPS = 20;

/** The stored job. */
export const JobRecordSchema = z.object({
  id: z.string(),
  title: z.string(),
  goal: z.string(),
  /** Qualified id of the person whose job it is (`telegram:42`), and their name. */
  owner: z.string(),
  ownerName: z.string(),
  /** The conversation it was created in: its status and result go there. */
  origin: ChatRecordSchema,
  /** Tools it may use without asking (`*`: every tool that does not always need a person). */
  tools: z.array(z.string()),
  /**
   * Set when `tools` were granted without a prompt that showed them: each one
   * then runs unattended only while the owner could still run it without being
   * asked in a chat of this kind (re-checked at every call).
   */
  standing: z.enum(['dm', 'group']).optional(),
  plan: z.boolean(),
  /** The model its origin conversation had chosen (`/model use`) when it was created; unset: the default. */
  model: z.string().optional(),
  /** The files its origin conversation had received lately when it was created, newest last. */
  files: z.array(JobFileSchema).optional(),
  maxIterations: z.number().int().positive(),
  timeoutMs: z.number().int().positive(),
  state: z.enum(JOB_STATES),
  /** What it achieved (completed) or why it ended otherwise. */
  result: z.string().optional(),
  repairAttempts: z.number().int().nonnegative(),
  createdAt: z.number(),
  updatedAt: z.number(),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  /** Its owner's answer to its question, taken up first by its next run: the approved call runs then, a refusal becomes the call's result. */
  answer: z.object({ call: ToolCallSchema, outcome: z.enum(['approved', 'denied', 'expired', 'superseded', 'loop']), deferred: z.array(ToolCallSchema) }).optional(),
  /** The step journal, newest last, and how many steps ran in all. */
  steps: z.array(JobStepSchema),
  stepCount: z.number().int().nonnegative(),
  /** Messages from the owner (`job_message`) not yet read by the job. */
  inbox: z.array(z.string()),
  /** The job's status message in its origin conversation. */
  statusMessage: z.object({ ids: z.array(z.string()) }).optional(),
  /** Set by the write that ends the job, cleared once its final message is out: a start posts what a crash kept from going out. */
  resultOwed: z.boolean().optional(),
  /** What the job is doing now, for its status line. */
  activity: z.string().optional(),
  /** The plan of a planned job, and how far it got (steps run without model calls). */
  planSteps: z
    .array(z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()), why: z.string().optional(), status: z.enum(['pending', 'done', 'failed']) }))
    .optional(),
  /** `running`: steps left to run; `abandoned` or `done`: the shared loop takes over. */
  planState: z.enum(['running', 'abandoned', 'done']).optional(),
});
export type JobRecord = z.infer<typeof JobRecordSchema>;

/**
 * A job as stored: earlier versions kept its conversation in the record; it is
 * read from there until its thread log is written (see JobConversations).
 */
export const StoredJobSchema = JobRecordSchema.extend({ messages: z.array(ChatMessageSchema).optional() });
export type StoredJob = z.infer<typeof StoredJobSchema>;

/** A job with its conversation with the model (the system prompt is rebuilt on each run), as a run works on it. */
export type RunningJob = JobRecord & { messages: ChatMessage[] };

/** What someone asks for when they create a job. */
export interface JobRequest {
  title: string;
  goal: string;
  owner: string;
  ownerName: string;
  origin: JobRecord['origin'];
  tools: string[];
  standing?: 'dm' | 'group';
  plan: boolean;
  model?: string;
  files?: JobFile[];
  maxIterations: number;
  timeoutMs: number;
}

/** A new pending job. */
export function newJob(id: string, request: JobRequest, now = Date.now()): JobRecord {
  return {
    id,
    ...request,
    state: 'pending',
    repairAttempts: 0,
    createdAt: now,
    updatedAt: now,
    steps: [],
    stepCount: 0,
    inbox: [],
  };
}

/** Appends a step to the journal, keeping it bounded; returns its number. */
export function journalStep(job: JobRecord, step: Omit<JobStep, 'n' | 'at'>, now = Date.now()): number {
  job.stepCount += 1;
  job.steps.push({ ...step, n: job.stepCount, at: now });
  if (job.steps.length > MAX_JOURNALED_STEPS) {
    // The oldest finished steps go; a step started and not finished stays for a restart to find.
    let surplus = job.steps.length - MAX_JOURNALED_STEPS;
    job.steps = job.steps.filter((kept) => kept.status === 'started' || surplus-- <= 0);
  }
  return job.stepCount;
}

/** Marks a journaled step as finished (it is nearly always among the newest). */
export function finishStep(job: JobRecord, n: number, status: JobStep['status']): void {
  for (let i = job.steps.length - 1; i >= 0; i -= 1) {
    if (job.steps[i]!.n === n) {
      job.steps[i]!.status = status;
      return;
    }
  }
}

/** Tool calls journaled as started and never finished: a crash came in between. */
export function unfinishedToolSteps(job: JobRecord): JobStep[] {
  return job.steps.filter((step) => step.kind === 'tool' && step.status === 'started');
}
