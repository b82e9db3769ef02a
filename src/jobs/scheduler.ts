/**
 * The job scheduler and its workers (seed 003): dispatch persists a job
 * before it is scheduled; at most `jobs.maxParallel` run at once, the others
 * wait in order; each running job has a worker with a message channel (stop,
 * a message from its owner); finished workers are dropped.
 *
 * A worker runs the job's conversation on the shared loop with a
 * {@link JobDelegate} until the model reports the goal reached, the job fails,
 * is cancelled, or its time runs out: then it is `stuck` and repaired (run
 * again with a note) at most `jobs.maxRepairAttempts` times before it fails.
 * A call the job may not make on its own pauses it (`waiting_approval`) and
 * asks its owner in the DM it was created in; the answer resumes it, and its
 * next run takes it up first (see answers.ts). Its conversation is a thread
 * log of its own: a step appends its new messages (see conversation.ts).
 *
 * Restart: pending and stuck jobs are scheduled again; running ones resume
 * from their saved conversation, a tool call journaled as started and never
 * finished reported to the model as interrupted (not run again), the call its
 * owner approved included; a job waiting for its owner keeps waiting.
 */
import type { PendingApproval } from '../engine/approval-book.js';
import type { ApprovalResumption } from '../engine/approval-flow.js';
import { DEFAULT_LOOP_CONFIG, runAgenticLoop, type LoopContext, type LoopOutcome } from '../engine/loop.js';
import type { AgentServices } from '../engine/services.js';
import type { Config } from '../config/schema.js';
import { JobDelegate, jobRequestMessage, type JobApprovalNeed } from './delegate.js';
import { runPlannedJob, type PlanRun } from './planning.js';
import { FINAL_STATES, type JobRecord, type JobRequest, type RunningJob } from './job.js';
import { approvedCallInterrupted, jobFailure, jobThreadKey, REPAIR_NOTE, reportInterrupted, stopText, type JobHost } from './job-runs.js';
import { toolResult } from '../llm/call-ids.js';
import { answerOf, ASKED_LATER, jobQuestion, takeAnswer } from './answers.js';
import { JobMailbox, type MailNotices } from './mailbox.js';
import { keepRun, runControl, saveRun } from './run-control.js';
import type { JobStore } from './job-store.js';
import { InProcessEngine } from '../deployment/work-queue.js';
import type { JobEngine } from './engine.js';
import { activeJobsCheck, refusalOnly, withinBounds } from './limits.js';
import { ToolError } from '../errors.js';
import { deliverOwedResults, JobProgress, type ProgressServices } from './progress.js';
import { accessLost, ownerAdmitted } from './owner-access.js';

/** Why a worker was stopped. */
type StopReason = 'cancel' | 'timeout' | 'shutdown';

interface Worker {
  abort: AbortController;
  done: Promise<void>;
}

/** Runs background jobs. */
export class JobScheduler {
  private readonly workers = new Map<string, Worker>();
  /** Jobs queued on the engine and not started yet. */
  private readonly queued = new Set<string>();
  private readonly progress = new Map<string, JobProgress>();
  /** Jobs to run again once their current worker has finished (a repair, a refused question). */
  private readonly again = new Set<string>();
  private closed = false;

  private readonly engine: JobEngine;
  private readonly mailbox: JobMailbox;
  /** What status messages and results are delivered with: the services and this scheduler's store. */
  private readonly progressServices: ProgressServices;

  constructor(
    private readonly services: AgentServices,
    private readonly jobs: JobStore,
    private readonly host: JobHost,
    engine?: JobEngine,
    /** How messages to running jobs are noticed; without it, only those posted in this process. */
    mail: MailNotices = { mail: () => Promise.resolve(), onMail: () => undefined },
  ) {
    this.engine = engine ?? new InProcessEngine(services.config.jobs.maxParallel);
    this.mailbox = new JobMailbox(mail);
    this.progressServices = { ...services, jobs };
  }

  private get config(): Config['jobs'] {
    return this.services.config.jobs;
  }

  /** Which engine runs the jobs. */
  get engineName(): JobEngine['name'] {
    return this.engine.name;
  }

  /** Jobs running now, and waiting for a slot. */
  get load(): { running: number; queued: number } {
    return { running: this.workers.size, queued: this.queued.size };
  }

  /** Starts the engine, then picks up the jobs the previous process left unfinished. */
  async start(): Promise<void> {
    await this.engine.start((id) => this.runOne(id));
    this.services.log.info({ engine: this.engine.name }, 'job engine started');
    void deliverOwedResults(this.progressServices);
    for (const job of await this.jobs.unfinished()) {
      if (job.state === 'in_progress' || (job.state === 'waiting_approval' && approvedCallInterrupted(job))) await this.reportInterrupted(job);
      else if (job.state === 'waiting_approval') continue;
      this.schedule(job.id);
    }
  }

  /** Stops every worker; running jobs stay `in_progress` and resume at the next start. */
  async stop(): Promise<void> {
    this.closed = true;
    this.queued.clear();
    const running = [...this.workers.values()];
    for (const worker of running) worker.abort.abort('shutdown' satisfies StopReason);
    await Promise.all(running.map((worker) => worker.done));
    await this.engine.stop();
  }

  /** Creates a job: persisted as `pending` first, then scheduled; refused (a ToolError) past `jobs.maxActivePerUser`. */
  async create(request: JobRequest): Promise<JobRecord> {
    const job = await this.jobs.create(request, activeJobsCheck(this.config));
    this.services.log.info({ job: job.id, owner: job.owner }, 'job created');
    const progress = this.progressOf(job);
    await progress.update(job, true);
    // Kept so that a restarted bot edits the same status message.
    await this.jobs.update(job.id, (record) => {
      if (progress.sent) record.statusMessage = progress.sent;
    });
    this.schedule(job.id);
    return job;
  }

  /** Cancels a job that has not ended: a running one is stopped (its model request and tools aborted). */
  async cancel(id: string, by: string): Promise<{ ok: boolean; message: string }> {
    let job = await this.jobs.get(id);
    if (!job) return { ok: false, message: `There is no job ${id}.` };
    if (FINAL_STATES.has(job.state)) return { ok: false, message: `Job ${id} has already ended (${job.state}).` };
    const worker = this.workers.get(id);
    if (worker) {
      worker.abort.abort('cancel' satisfies StopReason);
      await worker.done;
      // A run that was past its last step (it had just asked its owner) leaves the job as it was: cancelled below.
      job = await this.jobs.get(id);
      if (!job || FINAL_STATES.has(job.state)) return { ok: true, message: `Job ${id} was cancelled.` };
    }
    this.queued.delete(id);
    const ended = await this.jobs.transition(id, 'cancelled', (record) => (record.result = `cancelled by ${by}`));
    if (!ended.ok) return { ok: false, message: `Job ${id} could not be cancelled: ${ended.reason}.` };
    if (job.state === 'waiting_approval') await this.host.cancelQuestion(jobThreadKey(id), by);
    await this.progressOf(ended.job).finish(ended.job);
    return { ok: true, message: `Job ${id} was cancelled.` };
  }

  /** A message from the owner to a job that has not ended: it reads it before its next model call. */
  async message(id: string, text: string): Promise<{ ok: boolean; message: string }> {
    const job = await this.jobs.update(id, (record) => {
      if (!FINAL_STATES.has(record.state)) record.inbox.push(text);
    });
    if (!job) return { ok: false, message: `There is no job ${id}.` };
    if (FINAL_STATES.has(job.state)) return { ok: false, message: `Job ${id} has already ended (${job.state}).` };
    await this.mailbox.posted(id);
    return { ok: true, message: `Job ${id} will read the message before its next step.` };
  }

  /** Runs a failed or cancelled job again as a new job with the same request. */
  async retry(id: string): Promise<{ ok: boolean; message: string; job?: JobRecord }> {
    const job = await this.jobs.get(id);
    if (!job) return { ok: false, message: `There is no job ${id}.` };
    if (!FINAL_STATES.has(job.state)) return { ok: false, message: `Job ${id} has not ended (${job.state}); cancel it first.` };
    const { title, goal, owner, ownerName, origin, tools, standing, plan, model, maxIterations, timeoutMs } = job;
    const again = await this.create(withinBounds({ title, goal, owner, ownerName, origin, tools, ...(standing ? { standing } : {}), plan, ...(model ? { model } : {}), maxIterations, timeoutMs }, this.config)).catch(refusalOnly);
    if (again instanceof ToolError) return { ok: false, message: `Job ${id} was not run again: ${again.modelMessage}` };
    return { ok: true, message: `Job ${id} runs again as job ${again.id}.`, job: again };
  }

  /**
   * The owner answered a job's question: the job goes back to `in_progress`
   * with the answer, which its next run takes up first (the approved call runs
   * once, with that run's signal; a refusal becomes the call's result).
   */
  async resume(approval: PendingApproval, how: ApprovalResumption): Promise<void> {
    if (approval.work?.kind !== 'job') return;
    const { id } = approval.work;
    const job = await this.jobs.get(id);
    if (!job || job.state !== 'waiting_approval') return;
    const resumed = await this.jobs.transition(id, 'in_progress', (record) => (record.answer = answerOf(approval, how)));
    if (resumed.ok) this.schedule(id);
  }

  /** Reports what a crash interrupted: the conversation first, then the journal that says so. */
  private async reportInterrupted(stored: JobRecord): Promise<void> {
    const job = await this.running(stored);
    reportInterrupted(job);
    await this.jobs.saveConversation(job, job.messages);
    if (job.state === 'waiting_approval') await this.jobs.transition(job.id, 'in_progress', (record) => keepRun(record, job));
    else await this.jobs.update(job.id, (record) => keepRun(record, job));
  }

  /** The job with its conversation. */
  private async running(job: JobRecord): Promise<RunningJob> {
    return { ...job, messages: await this.jobs.conversation(job.id) };
  }

  private schedule(id: string): void {
    if (this.closed || this.workers.has(id) || this.queued.has(id)) return;
    this.queued.add(id);
    this.engine.enqueue(id).catch((error: unknown) => {
      this.queued.delete(id);
      this.services.log.error({ err: error, job: id }, 'could not queue a job run; it runs again at the next start');
    });
  }

  /** The engine starts a run: one worker per job, whatever the engine delivers twice. */
  private async runOne(id: string): Promise<void> {
    this.queued.delete(id);
    if (this.closed || this.workers.has(id)) return;
    const abort = new AbortController();
    const worker: Worker = { abort, done: Promise.resolve() };
    this.workers.set(id, worker);
    this.mailbox.runStarted(id);
    worker.done = this.work(id, abort)
      .catch((error: unknown) => this.services.log.error({ err: error, job: id }, 'job worker failed'))
      .finally(() => {
        this.workers.delete(id);
        this.mailbox.runEnded(id);
        if (this.again.delete(id)) this.schedule(id);
      });
    await worker.done;
  }

  /** One run of a job, to an end, a question, a stop or `stuck`. */
  private async work(id: string, abort: AbortController): Promise<void> {
    const stored = await this.jobs.get(id);
    if (!stored || FINAL_STATES.has(stored.state) || stored.state === 'waiting_approval') return;
    let job = await this.running(stored);
    if (job.state !== 'in_progress') {
      const started = await this.jobs.transition(id, 'in_progress', (record) => (record.startedAt = Date.now()));
      if (!started.ok) return;
      job = { ...started.job, messages: job.messages };
      if (stored.state === 'stuck') job.messages.push({ role: 'user', content: REPAIR_NOTE });
    }
    const progress = this.progressOf(job);
    void progress.update(job, true);
    // Each run has the job's whole time: waiting for its owner does not count.
    const timer = setTimeout(() => abort.abort('timeout' satisfies StopReason), job.timeoutMs);
    timer.unref();
    const ticker = setInterval(() => void progress.update(job), 5_000);
    ticker.unref();
    const thread = `job:${job.id}`;
    this.services.events.emit('job.run', { thread, userId: job.owner, phase: 'started' });
    try {
      if (job.answer) {
        await takeAnswer(job, new JobDelegate(job, this.services, this.runControl(job, abort.signal)), this.services, abort.signal, () => saveRun(this.jobs, job));
        if (abort.signal.aborted) return await this.stopped(job, abort.signal.reason as StopReason);
      }
      if (job.plan && job.planState !== 'abandoned' && job.planState !== 'done') {
        // The loop asks before each model call; a plan's steps run without one, so it is asked here.
        if (!(await ownerAdmitted(this.services.outbox, job.owner, job.origin))) return await this.end(job, 'failed', accessLost(job.ownerName));
        const planned = await this.runPlanned(job, abort.signal, progress);
        if (planned.kind === 'done') return await this.end(job, 'completed', planned.report);
        if (planned.kind === 'failed') return await this.end(job, 'failed', planned.reason);
        if (abort.signal.aborted) return await this.stopped(job, abort.signal.reason as StopReason);
        this.services.log.info({ job: job.id, why: planned.why }, 'job plan handed over to the loop');
      }
      const outcome = await this.runLoop(job, abort.signal, progress);
      await this.settle(job, outcome, abort.signal);
    } catch (error) {
      await this.end(job, 'failed', abort.signal.aborted ? stopText(abort.signal.reason) : jobFailure(error, job));
    } finally {
      clearTimeout(timer);
      clearInterval(ticker);
      this.services.events.emit('job.run', { thread, userId: job.owner, phase: 'ended', outcome: abort.signal.aborted ? 'stopped' : 'ok' });
    }
  }

  /** The planned path: a plan, its steps without model calls, one completion check. */
  private runPlanned(job: RunningJob, signal: AbortSignal, progress: JobProgress): Promise<PlanRun> {
    return runPlannedJob(job, this.services, this.runControl(job, signal, progress), async () => this.mailbox.shouldRead(job.id) && Boolean((await this.jobs.get(job.id))?.inbox.length));
  }

  private async runLoop(job: RunningJob, signal: AbortSignal, progress: JobProgress): Promise<LoopOutcome<JobApprovalNeed>> {
    if (!job.messages.length) job.messages.push({ role: 'user', content: jobRequestMessage(job) });
    const delegate = new JobDelegate(job, this.services, this.runControl(job, signal, progress));
    const ctx: LoopContext = { messages: [{ role: 'system', content: '' }, ...job.messages], tools: [], forceText: false };
    const { agent } = this.services.config;
    try {
      return await runAgenticLoop(delegate, ctx, {
        ...DEFAULT_LOOP_CONFIG,
        maxIterations: job.maxIterations + 1,
        maxToolIntentNudges: agent.maxToolIntentNudges,
        maxContinuations: agent.loopGuards.maxContinuations,
        detectors: agent.loopGuards,
      });
    } finally {
      job.messages = ctx.messages.slice(1);
      // The last calls' audit records (written behind the steps) are in before the run's outcome is.
      await this.services.pipeline.audited(delegate.toolContext().threadKey);
    }
  }

  /** Where a run ended: the job's next state. */
  private async settle(job: RunningJob, outcome: LoopOutcome<JobApprovalNeed>, signal: AbortSignal): Promise<void> {
    switch (outcome.type) {
      case 'response':
        return this.end(job, 'completed', outcome.text);
      case 'failure':
        return this.end(job, 'failed', outcome.reason);
      case 'max_iterations':
        return this.end(job, 'failed', `it used all ${job.maxIterations} steps without reaching the goal`);
      case 'need_approval':
        return this.askOwner(job, outcome.pending);
      case 'stopped':
        return this.stopped(job, signal.reason as StopReason);
    }
  }

  private async stopped(job: RunningJob, reason: StopReason): Promise<void> {
    // Left running on shutdown: the next start resumes it from what is saved now.
    if (reason === 'shutdown') return saveRun(this.jobs, job);
    if (reason === 'cancel') return this.end(job, 'cancelled', 'cancelled by its owner');
    await this.jobs.saveConversation(job, job.messages);
    const stuck = await this.jobs.transition(job.id, 'stuck', (record) => keepRun(record, job));
    if (!stuck.ok) return;
    void this.progressOf(stuck.job).update(stuck.job, true);
    if (stuck.job.repairAttempts >= this.config.maxRepairAttempts) {
      return this.end({ ...stuck.job, messages: job.messages }, 'failed', `it timed out ${stuck.job.repairAttempts + 1} times (${Math.round(job.timeoutMs / 60_000)} min each) and repairs did not help`);
    }
    await this.jobs.update(job.id, (record) => (record.repairAttempts += 1));
    this.services.log.warn({ job: job.id, attempt: stuck.job.repairAttempts + 1 }, 'job timed out; repairing');
    this.again.add(job.id);
  }

  /** Pauses the job and asks its owner about the first waiting call; the others are asked on later steps. */
  private async askOwner(job: RunningJob, need: JobApprovalNeed): Promise<void> {
    const [first, ...rest] = need.calls;
    if (!first) return;
    const approval = jobQuestion(job, first, need.reason, this.services.config.agent.approvalTimeoutMs);
    if (!approval) {
      // Nobody can be asked in a group: the calls are refused and the job goes on.
      job.messages.push(...need.calls.map((result) => toolResult(result.call, 'Not run: this call needs the owner\'s approval, which a job created in a group cannot ask for.')));
      await saveRun(this.jobs, job);
      this.again.add(job.id);
      return;
    }
    job.messages.push(...rest.map((result) => toolResult(result.call, ASKED_LATER)));
    await this.jobs.saveConversation(job, job.messages);
    const waiting = await this.jobs.transition(job.id, 'waiting_approval', (record) => keepRun(record, job));
    if (!waiting.ok) return;
    void this.progressOf(waiting.job).update(waiting.job, true);
    if (!(await this.host.ask(approval))) await this.resume(approval, { kind: 'denied' });
  }

  private async end(job: RunningJob, state: 'completed' | 'failed' | 'cancelled', result: string): Promise<void> {
    // Ended already (what came after its end failed): its conversation and record stay as they ended.
    if (FINAL_STATES.has(job.state)) return;
    await this.jobs.saveConversation(job, job.messages);
    const ended = await this.jobs.transition(job.id, state, (record) => {
      keepRun(record, job);
      record.result = result;
      delete record.activity;
    });
    if (!ended.ok) return;
    job.state = state;
    this.services.log.info({ job: job.id, state }, 'job ended');
    await this.progressOf(ended.job).finish(ended.job);
    this.progress.delete(job.id);
  }

  private runControl(job: RunningJob, signal: AbortSignal, progress?: JobProgress) {
    return runControl(this.services, this.jobs, job, signal, progress, this.mailbox);
  }

  private progressOf(job: JobRecord): JobProgress {
    let progress = this.progress.get(job.id);
    if (!progress) {
      progress = new JobProgress(this.progressServices, job.origin, job.statusMessage);
      this.progress.set(job.id, progress);
    }
    return progress;
  }
}
