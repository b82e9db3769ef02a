/**
 * Fires routines at their times. Each firing is claimed by its id (routine id
 * and scheduled time) before it runs: a retry, a restart or a second instance
 * that reaches the same firing finds it claimed and does nothing. A claimed
 * firing then runs: a reminder is posted, a prompt becomes a background job.
 * A kill in the instant between the claim and the post loses that one firing
 * rather than risk posting it twice.
 *
 * Timers: in this process, or BullMQ delayed jobs (the firing id as job id)
 * when the store is Redis, so that the next firing is waiting in Redis even
 * while no instance runs. After downtime, the latest firing missed by less
 * than `routines.catchUpWindow` runs once, in the background after the start
 * (messages arriving meanwhile are not held back); older ones are recorded as
 * skipped. A prompt routine whose previous firing's job has not ended starts
 * no other: that firing is recorded as skipped, and nobody is told.
 */
import { deliver } from '../engine/delivery.js';
import type { AgentServices } from '../engine/services.js';
import { ToolError } from '../errors.js';
import { FINAL_STATES } from '../jobs/job.js';
import { refusalOnly } from '../jobs/limits.js';
import type { JobScheduler } from '../jobs/scheduler.js';
import type { JobStore } from '../jobs/job-store.js';
import { accessLost, ownerAdmitted } from '../jobs/owner-access.js';
import type { Timers } from '../store/timers.js';
import { threadKeyOf } from '../channels/types.js';
import { AUTONOMOUS_WILDCARD } from '../tools/approval-rule.js';
import { catchUpWindowMs, firingId, type FiringClaims } from './claims.js';
import { routineCountCheck } from './limits.js';
import type { Routine, RoutineStore } from './routine.js';
import { describeSchedule, nextFiring } from './schedule.js';

/** Why a firing runs. */
type FiringReason = 'scheduled' | 'catch-up' | 'manual';

/** What a firing did: its result in words; the job it started; why it did not run; why the routine must pause. */
interface FiringResult {
  text: string;
  jobId?: string;
  skipped?: string;
  pause?: string;
}

/** The routines of a running bot. */
export class RoutineScheduler {
  private closed = false;
  /** The catch-up of firings missed while down, running after the start. */
  private catchingUp: Promise<void> = Promise.resolve();

  constructor(
    private readonly services: AgentServices,
    private readonly routines: RoutineStore,
    private readonly claims: FiringClaims,
    private readonly timers: Timers,
    private readonly jobs: { scheduler(): JobScheduler; store: JobStore },
    private readonly now: () => number = Date.now,
  ) {}

  /** Which timers fire the routines. */
  get timersName(): Timers['name'] {
    return this.timers.name;
  }

  /** Arms every enabled routine, and starts catching up what was missed while down, in the background. */
  async start(): Promise<void> {
    await this.timers.start((routineId, at) => this.fire(routineId, at, 'scheduled'));
    const missed: Routine[] = [];
    for (const routine of await this.routines.list()) {
      if (!routine.enabled || routine.nextAt === undefined) continue;
      if (routine.nextAt > this.now()) await this.timers.arm(routine.id, routine.nextAt);
      else missed.push(routine);
    }
    this.catchingUp = this.catchUpAll(missed);
  }

  async stop(): Promise<void> {
    this.closed = true;
    await this.catchingUp;
    await this.timers.stop();
    await this.claims.close();
  }

  /** Stores a new routine and arms its first firing; refused (a ToolError) past `routines.maxPerUser`. */
  async add(routine: Routine): Promise<Routine> {
    const created = await this.routines.create(routine, routineCountCheck(this.services.config.routines));
    if (created.enabled && created.nextAt !== undefined) await this.timers.arm(created.id, created.nextAt);
    return created;
  }

  async pause(id: string): Promise<Routine | undefined> {
    const routine = await this.routines.update(id, (entry) => (entry.enabled = false));
    await this.timers.disarm(id);
    return routine;
  }

  async resume(id: string): Promise<Routine | undefined> {
    const now = this.now();
    const routine = await this.routines.update(id, (entry) => {
      entry.enabled = true;
      delete entry.pausedReason;
      entry.nextAt = nextFiring(entry.schedule, entry.timezone, now);
    });
    if (routine?.nextAt !== undefined) await this.timers.arm(id, routine.nextAt);
    return routine;
  }

  async delete(id: string): Promise<boolean> {
    await this.timers.disarm(id);
    const deleted = await this.routines.delete(id);
    await this.claims.forget(id);
    return deleted;
  }

  /** Runs a routine now, outside its schedule (its next firing stays as it was). */
  async runNow(id: string): Promise<boolean> {
    const routine = await this.routines.get(id);
    if (!routine) return false;
    await this.fire(id, this.now(), 'manual');
    return true;
  }

  /** Catches up each routine in turn, once the runtime reads messages (it starts reading when the start returns). */
  private async catchUpAll(routines: Routine[]): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const window = catchUpWindowMs(this.services.config.routines);
    for (const routine of routines) {
      if (this.closed) return;
      try {
        await this.catchUp(routine, this.now(), window);
      } catch (error) {
        this.services.log.error({ err: error, routine: routine.id }, 'routine catch-up failed');
      }
    }
  }

  /** The latest missed firing within the window runs once; older missed ones are recorded as skipped. */
  private async catchUp(routine: Routine, now: number, window: number): Promise<void> {
    const missed: number[] = [];
    for (let at: number | undefined = routine.nextAt; at !== undefined && at <= now && missed.length < 1_000; at = nextFiring(routine.schedule, routine.timezone, at)) missed.push(at);
    const latest = missed.at(-1);
    const runs = latest !== undefined && now - latest <= window ? latest : undefined;
    const skipped = missed.filter((at) => at !== runs).slice(-20);
    const next = nextFiring(routine.schedule, routine.timezone, now);
    await this.routines.update(routine.id, (entry) => {
      entry.skipped.push(...skipped.map((at) => ({ at, recordedAt: now, reason: 'missed while the bot was down' })));
      if (next === undefined) delete entry.nextAt;
      else entry.nextAt = next;
    });
    if (skipped.length) this.services.log.info({ routine: routine.id, skipped: skipped.length }, 'routine firings missed while down were skipped');
    if (runs !== undefined) await this.fire(routine.id, runs, 'catch-up');
    if (next !== undefined) await this.timers.arm(routine.id, next);
  }

  /** One firing: claimed, checked, run, and the next one armed. */
  private async fire(routineId: string, at: number, reason: FiringReason): Promise<void> {
    if (this.closed) return;
    const routine = await this.routines.get(routineId);
    if (!routine) return;
    // A timer of an older schedule (paused, resumed, or run by another instance) is not this firing.
    if (reason === 'scheduled' && (!routine.enabled || routine.nextAt !== at)) return;
    const id = reason === 'manual' ? `${firingId(routineId, at)}_manual` : firingId(routineId, at);
    if (!(await this.claims.claim(routineId, id))) {
      this.services.log.debug({ routine: routineId, at }, 'routine firing already claimed');
      return;
    }
    const startedAt = Date.now();
    const result = await this.run(routine, at, id);
    this.services.events.emit('routine.fired', {
      routine: routine.id,
      thread: threadKeyOf(routine.origin),
      userId: routine.owner,
      startedAt,
      durationMs: Date.now() - startedAt,
      result: result.text,
      ...(result.jobId ? { jobId: result.jobId } : {}),
    });
    const next = reason === 'manual' ? routine.nextAt : nextFiring(routine.schedule, routine.timezone, Math.max(at, this.now()));
    const updated = await this.routines.update(routineId, (entry) => {
      entry.lastAt = at;
      entry.lastResult = result.text;
      if (result.jobId) entry.lastJobId = result.jobId;
      if (result.skipped) entry.skipped.push({ at, recordedAt: this.now(), reason: result.skipped });
      if (result.pause) {
        entry.enabled = false;
        entry.pausedReason = result.pause;
      }
      if (reason !== 'manual') {
        if (next === undefined) delete entry.nextAt;
        else entry.nextAt = next;
      }
    });
    // Told once: a routine already paused for this reason (run by hand since) says nothing more.
    if (result.pause && (routine.enabled || routine.pausedReason !== result.pause)) await this.tellOwner(routine, `routine:${routine.id}:${id}:paused`, `⏸️ Routine ${routine.id} "${routine.name}" is paused: ${result.pause}. Fix it and use /routines resume ${routine.id}.`);
    if (updated?.enabled && reason !== 'manual' && next !== undefined) await this.timers.arm(routineId, next);
  }

  /**
   * Posts a reminder or starts the prompt's job; a broken configuration pauses
   * instead of spending tokens; a job still running from the previous firing,
   * or a job limit reached, skips this firing. A reminder is a named delivery
   * (`routine:<id>:<firing>`), written into its conversation's history too.
   */
  private async run(routine: Routine, at: number, firing: string): Promise<FiringResult> {
    const { registry, outbox, log } = this.services;
    const address = { channel: routine.origin.channel, chatId: routine.origin.chatId, ...(routine.origin.subId ? { subId: routine.origin.subId } : {}) };
    // Someone who lost access stops acting through the bot: the routine pauses, and says so once.
    if (!(await ownerAdmitted(outbox, routine.owner, routine.origin))) return { text: 'not run', pause: accessLost(routine.ownerName) };
    if (routine.action.kind === 'message') {
      const sent = await deliver(this.services, { name: `routine:${routine.id}:${firing}`, chat: routine.origin, text: `⏰ ${routine.action.text}`, remembered: true });
      if (!sent) return { text: 'the reminder could not be posted', pause: 'its conversation could not be reached' };
      log.info({ routine: routine.id, at }, 'reminder sent');
      return { text: 'reminder sent' };
    }
    const unknown = routine.tools.filter((tool) => tool !== AUTONOMOUS_WILDCARD && !registry.get(tool));
    if (unknown.length) return { text: 'not run', pause: `it uses ${unknown.length === 1 ? 'a tool that does not exist' : 'tools that do not exist'}: ${unknown.join(', ')}` };
    if (!outbox.channelOf(address)) return { text: 'not run', pause: `its conversation is on ${routine.origin.channel}, which is not running` };
    const skipped = await this.previousStillRuns(routine);
    if (skipped) {
      log.info({ routine: routine.id, at, reason: skipped }, 'routine firing skipped');
      return { text: `skipped: ${skipped}`, skipped };
    }
    const { jobs } = this.services.config;
    // The model its conversation uses at this firing (`/model use` there applies to the routine's work too).
    const model = (await this.services.history.get(threadKeyOf(address)))?.model;
    const job = await this.jobs.scheduler()
      .create({
        title: routine.name,
        goal: routine.action.prompt,
        owner: routine.owner,
        ownerName: routine.ownerName,
        origin: routine.origin,
        tools: routine.tools,
        ...(routine.standing ? { standing: routine.standing } : {}),
        ...(model ? { model } : {}),
        ...(routine.files ? { files: routine.files } : {}),
        plan: false,
        maxIterations: jobs.maxIterations,
        timeoutMs: Math.round(jobs.timeoutMinutes * 60_000),
      })
      .catch(refusalOnly);
    if (job instanceof ToolError) {
      log.info({ routine: routine.id, at, reason: job.modelMessage }, 'routine firing skipped');
      return { text: `skipped: ${job.modelMessage}`, skipped: job.modelMessage };
    }
    return { text: `started job ${job.id}`, jobId: job.id };
  }

  /** Why a prompt routine's firing may not start a job: the job of its previous firing has not ended. */
  private async previousStillRuns(routine: Routine): Promise<string | undefined> {
    if (!routine.lastJobId) return undefined;
    const job = await this.jobs.store.get(routine.lastJobId);
    if (!job || FINAL_STATES.has(job.state)) return undefined;
    return `the job of its previous firing (${job.id}) has not ended (${job.state.replace('_', ' ')})`;
  }

  private async tellOwner(routine: Routine, name: string, text: string): Promise<void> {
    await deliver(this.services, { name, chat: routine.origin, text });
  }

  /** A routine in one line, for lists. */
  describe(routine: Routine): string {
    const now = this.now();
    const what = routine.action.kind === 'message' ? `reminder "${routine.action.text}"` : `job "${routine.name}"`;
    const when = describeSchedule(routine.schedule, routine.timezone, now);
    const state = !routine.enabled ? `paused${routine.pausedReason ? ` (${routine.pausedReason})` : ''}` : routine.nextAt !== undefined ? `next ${new Date(routine.nextAt).toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'done';
    return `${routine.id}: ${what}, ${when}; ${state}`;
  }
}
