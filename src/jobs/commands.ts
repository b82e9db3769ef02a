/**
 * `/jobs`: lists, shows, cancels or retries background jobs. People see their
 * own; admins of a group those created in its scope; DM jobs stay their
 * owner's (and the bot owners'). Only the owner retries: a retry runs with the
 * owner's grants.
 */
import type { CommandArg } from '../channels/command-grammar.js';
import type { CommandSpec } from '../channels/types.js';
import { visibilityOf, type FeatureCommand } from '../engine/feature.js';
import type { JobStore } from './job-store.js';
import { jobStatusLine } from './progress.js';
import type { JobScheduler } from './scheduler.js';

/** A background job's id. */
const JOB_ARG: CommandArg = { name: 'id', description: 'Job id (from /jobs)', kind: 'word', required: true };

/** The `/jobs` command. */
export const JOBS_COMMAND: CommandSpec = {
  name: 'jobs',
  description: 'Your background jobs (admins: every job here)',
  defaultSub: 'list',
  subcommands: [
    { name: 'list', description: 'List the jobs' },
    { name: 'show', description: 'Show one job', args: [JOB_ARG] },
    { name: 'cancel', description: 'Cancel a job that has not ended', args: [JOB_ARG] },
    { name: 'retry', description: 'Run an ended job again', args: [JOB_ARG] },
  ],
};

/** `/jobs` with its handler. */
export function jobsCommand(store: JobStore, scheduler: JobScheduler): FeatureCommand {
  return {
    spec: JOBS_COMMAND,
    async run(event, parsed, caller) {
      const userId = caller.userId;
      const visible = await visibilityOf(event, caller);
      if ((parsed.sub ?? 'list') === 'list') {
        const jobs = (await store.list(visible.wide ? { scope: event.chat.scope } : { owner: userId })).filter(visible.sees).slice(0, 20);
        if (!jobs.length) return 'No jobs here. Ask me to do something in the background and I will start one.';
        return `Jobs:\n${jobs.map((job) => `• ${jobStatusLine(job)}${job.owner === userId ? '' : ` (${job.ownerName})`}`).join('\n')}`;
      }
      const id = String(parsed.args.id).trim();
      const job = await store.get(id);
      if (!job || !visible.sees(job)) return { text: `There is no job ${id} of yours here. /jobs lists them.`, private: true };
      switch (parsed.sub) {
        case 'show':
          return [jobStatusLine(job), `Goal: ${job.goal}`, `Tools without asking: ${job.tools.join(', ') || 'none'}`, ...(job.result ? [`Result: ${job.result}`] : [])].join('\n');
        case 'cancel':
          return (await scheduler.cancel(id, event.sender.name)).message;
        default:
          if (job.owner !== userId) return { text: `Only ${job.ownerName} can retry job ${id}: a retry runs with the grants of the person whose job it is.`, private: true };
          return (await scheduler.retry(id)).message;
      }
    },
  };
}
