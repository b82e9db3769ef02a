/**
 * What a job shows in the conversation it was created in: one status message,
 * edited as it goes (state, step, what it is doing, elapsed time), then a
 * final message with the result or why it ended. Both are named deliveries
 * (`job:<id>:status`, `job:<id>:result`): sent again after a crash or a
 * restart, they are not posted twice; the result is also written into the
 * conversation's history as what the bot said.
 */
import { addressOf, deliver, type DeliveryServices } from '../engine/delivery.js';
import { formatElapsed } from '../engine/elapsed.js';
import type { ChatAddress, ChatInfo, SentMessage } from '../channels/types.js';
import { FINAL_STATES, type JobRecord, type JobState } from './job.js';
import type { JobStore } from './job-store.js';

/** What a job's messages need: the delivery, and its store (whether its final message is owed). */
export type ProgressServices = DeliveryServices & { jobs: JobStore };

/** Status edits of one job are at least this far apart, unless its state changes. */
const EDIT_SPACING_MS = 5_000;

const STATE_WORDS: Record<JobState, string> = {
  pending: 'waiting to start',
  in_progress: 'working',
  waiting_approval: 'waiting for your approval',
  completed: 'done',
  failed: 'failed',
  stuck: 'stuck (timed out), repairing',
  cancelled: 'cancelled',
};

const STATE_MARKS: Record<JobState, string> = {
  pending: '🕒',
  in_progress: '🛠️',
  waiting_approval: '✋',
  completed: '✅',
  failed: '❌',
  stuck: '⚠️',
  cancelled: '🚫',
};

/** The status line of a job. */
export function jobStatusLine(job: JobRecord, now = Date.now()): string {
  const parts = [`${STATE_MARKS[job.state]} Job ${job.id} "${job.title}": ${STATE_WORDS[job.state]}`];
  if (job.state === 'in_progress') {
    if (job.stepCount) parts.push(`step ${job.stepCount}`);
    if (job.activity) parts.push(job.activity);
  }
  if (job.startedAt && !job.finishedAt) parts.push(formatElapsed(Math.floor((now - job.startedAt) / 1_000)));
  return parts.join(' · ');
}

/** The message a finished job leaves in its conversation. */
export function jobFinalMessage(job: JobRecord): string {
  const head = `${STATE_MARKS[job.state]} Job ${job.id} "${job.title}"`;
  if (job.state === 'completed') return `${head} is done.\n\n${job.result ?? ''}`.trimEnd();
  if (job.state === 'cancelled') return `${head} was cancelled${job.result ? `: ${job.result}` : '.'}`;
  // A reason may end a sentence of its own ("FAILED: the site is down."): one full stop, not two.
  return `${head} failed: ${job.result ?? 'no reason given'}`.replace(/([^.!?])$/, '$1.');
}

/** Keeps one job's status message up to date. */
export class JobProgress {
  private message: SentMessage | undefined;
  private lastEditAt = 0;
  private lastState: JobState | undefined;
  private lastText = '';
  private pending: Promise<void> = Promise.resolve();
  private readonly chat: ChatAddress;

  constructor(
    private readonly services: ProgressServices,
    /** The conversation the job was created in. */
    private readonly origin: ChatInfo,
    message?: { ids: string[] },
  ) {
    this.chat = addressOf(origin);
    if (message?.ids.length) this.message = { chat: this.chat, ids: message.ids };
  }

  /** The status message, once sent (to be kept in the job's record). */
  get sent(): { ids: string[] } | undefined {
    return this.message ? { ids: [...this.message.ids] } : undefined;
  }

  /** Shows the job's state; edits are spaced unless the state changed or `force` is set. */
  update(job: JobRecord, force = false): Promise<void> {
    const now = Date.now();
    const changed = job.state !== this.lastState;
    if (!force && !changed && now - this.lastEditAt < EDIT_SPACING_MS) return this.pending;
    const text = jobStatusLine(job, now);
    if (text === this.lastText) return this.pending;
    this.lastEditAt = now;
    this.lastState = job.state;
    this.lastText = text;
    this.pending = this.pending.then(async () => {
      const { outbox } = this.services;
      this.message = this.message ? await outbox.edit(this.message, text) : await outbox.deliver(this.chat, text, `job:${job.id}:status`);
    });
    return this.pending;
  }

  /**
   * The final status, then a new message with the result (a new message
   * notifies; an edit does not). Where an edit may print the status again (a
   * terminal), the result alone says it: one line, not two.
   */
  async finish(job: JobRecord): Promise<void> {
    if (!this.services.outbox.channelOf(this.chat)?.capabilities.editsMayRepeat) await this.update(job, true);
    await this.pending;
    const sent = await deliver(this.services, { name: `job:${job.id}:result`, chat: this.origin, text: jobFinalMessage(job), remembered: true });
    if (sent) await this.services.jobs.update(job.id, (record) => delete record.resultOwed);
  }
}

/**
 * Posts the final messages of jobs that ended without one going out (the
 * process died between the end and the post, or the platform refused it):
 * at start, in the background. A message that did go out is not posted again.
 */
export async function deliverOwedResults(services: ProgressServices): Promise<void> {
  // Only jobs ended before this start: one ending now posts its own.
  const started = Date.now();
  try {
    for (const job of await services.jobs.list({ states: [...FINAL_STATES] })) {
      if (job.resultOwed && (job.finishedAt ?? 0) < started) await new JobProgress(services, job.origin, job.statusMessage).finish(job);
    }
  } catch (error) {
    services.log.error({ err: error }, 'final messages of ended jobs not posted');
  }
}
