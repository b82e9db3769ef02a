/**
 * The limits on jobs (SPEC section 12): how many of one person's jobs may be
 * unfinished at once (`jobs.maxActivePerUser`), and the most steps and time a
 * model may give one (`jobs.maxIterationsLimit`, `jobs.maxTimeoutMinutes`). A
 * refusal names the limit and its value, so that the person knows what to
 * change or wait for.
 */
import type { Config } from '../config/schema.js';
import { ToolError } from '../errors.js';
import { OPEN_STATES } from './job.js';
import type { ActiveJobsCheck, JobStore } from './job-store.js';

/** What `create_job` asks for that a limit bounds. */
export interface JobAsk {
  maxIterations?: number | undefined;
  timeoutMinutes?: number | undefined;
}

/** The reason one more job of a person with `active` unfinished jobs is refused, or undefined when it may start. */
export function activeJobsRefusal(active: number, config: Config['jobs']): string | undefined {
  const limit = config.maxActivePerUser;
  if (active < limit) return undefined;
  return `you already have ${active} active job${active === 1 ? '' : 's'} (jobs.maxActivePerUser is ${limit}); wait for one to end or cancel one first.`;
}

/** The check {@link JobStore.create} makes atomically with listing a new job. */
export function activeJobsCheck(config: Config['jobs']): ActiveJobsCheck {
  return (active) => activeJobsRefusal(active, config);
}

/**
 * Refuses steps or time above the configured bounds.
 *
 * @throws ToolError naming the limit and its value
 */
export function checkJobBounds(ask: JobAsk, config: Config['jobs']): void {
  if (ask.maxIterations !== undefined && ask.maxIterations > config.maxIterationsLimit) {
    throw new ToolError(`maxIterations ${ask.maxIterations} is above the limit (jobs.maxIterationsLimit is ${config.maxIterationsLimit}); ask for at most ${config.maxIterationsLimit}.`);
  }
  if (ask.timeoutMinutes !== undefined && ask.timeoutMinutes > config.maxTimeoutMinutes) {
    throw new ToolError(`timeoutMinutes ${ask.timeoutMinutes} is above the limit (jobs.maxTimeoutMinutes is ${config.maxTimeoutMinutes}); ask for at most ${config.maxTimeoutMinutes}.`);
  }
}

/**
 * Every job limit a new job of `owner` must meet, checked before anyone is
 * asked to approve it (the atomic count is made again when it is created).
 *
 * @throws ToolError naming the limit and its value
 */
export async function checkJobRequest(jobs: JobStore, owner: string, ask: JobAsk, config: Config['jobs']): Promise<void> {
  checkJobBounds(ask, config);
  const active = await jobs.list({ owner, states: OPEN_STATES });
  const refusal = activeJobsRefusal(active.length, config);
  if (refusal) throw new ToolError(refusal);
}

/** A stored request brought within today's bounds (a retry of a job made under wider ones). */
export function withinBounds<T extends { maxIterations: number; timeoutMs: number }>(request: T, config: Config['jobs']): T {
  return { ...request, maxIterations: Math.min(request.maxIterations, config.maxIterationsLimit), timeoutMs: Math.min(request.timeoutMs, Math.round(config.maxTimeoutMinutes * 60_000)) };
}

/** A refusal (a ToolError) as a value, for callers that report it; any other error is thrown on. */
export function refusalOnly(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  throw error;
}
