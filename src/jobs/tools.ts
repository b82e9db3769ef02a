/**
 * The job tools (SPEC section 12, a public contract): `create_job`,
 * `list_jobs`, `job_status`, `cancel_job`, `job_message`, offered as one tool
 * source. `create_job` needs approval like any tool with side effects; the
 * others are free and see only the caller's own jobs.
 */
import { z } from 'zod';
import type { ThreadHistory } from '../engine/history.js';
import type { Config } from '../config/schema.js';
import { ToolError } from '../errors.js';
import { StaticToolSource } from '../tools/source.js';
import type { GrantRules } from '../tools/grants.js';
import type { Tool, ToolContext } from '../tools/types.js';
import { JOB_STATES, type JobRecord } from './job.js';
import type { JobStore } from './job-store.js';
import { checkJobBounds, checkJobRequest } from './limits.js';
import { jobStatusLine } from './progress.js';
import type { JobScheduler } from './scheduler.js';
import { recentFiles } from './files.js';

/** What the job tools work with; the scheduler exists once the runtime does. */
export interface JobToolDeps {
  config: Config;
  jobs: JobStore;
  history: ThreadHistory;
  scheduler(): JobScheduler;
  /** Which tools a request grants, and which of them run on standing permissions alone. */
  grants: GrantRules;
}

/** Refuses steering from a group: a job is its owner's, steered from the owner's DM. */
export function refuseInGroup(ctx: ToolContext, what: string): void {
  if (ctx.approval.kind === 'chat' && ctx.approval.chatKind === 'group') {
    throw new ToolError(`${what} only from a direct message with the bot, by its owner. Tell the user to do it there.`);
  }
}

const createParams = z.object({
  title: z.string().min(1).max(120).describe('A short name for the job'),
  goal: z.string().min(1).max(4000).describe('What the job must achieve, in enough detail to work on it alone'),
  tools: z.array(z.string()).max(50).optional().describe('Tools the job may use without asking (default: the read-only ones; "*" for every tool you may use)'),
  plan: z.boolean().optional().describe('Plan the steps first, then run them'),
  maxIterations: z.number().int().min(1).max(500).optional().describe('Most model steps (default from config)'),
  timeoutMinutes: z.number().positive().max(1440).optional().describe('Time limit of a run, in minutes (default from config)'),
});
const listParams = z.object({ state: z.enum(JOB_STATES).optional().describe('Only jobs in this state') });
const idParams = z.object({ id: z.string().min(1).max(40).describe('The job id, e.g. j1a2b3c4d') });
const messageParams = z.object({ id: z.string().min(1).max(40).describe('The job id'), text: z.string().min(1).max(4000).describe('The message for the job') });

/** The job tools as a tool source named `jobs`. */
export function jobToolSource(deps: JobToolDeps): StaticToolSource {
  return new StaticToolSource('jobs', jobTools(deps) as unknown as Tool[]);
}

/** The five job tools. */
export function jobTools(deps: JobToolDeps): [Tool<typeof createParams>, Tool<typeof listParams>, Tool<typeof idParams>, Tool<typeof idParams>, Tool<typeof messageParams>] {
  /** The caller's job `id`, or a ToolError that does not say whether someone else has one. */
  const ownJob = async (id: string, ctx: ToolContext): Promise<JobRecord> => {
    const job = await deps.jobs.get(id.trim());
    if (!job || job.owner !== ctx.userId) throw new ToolError(`you have no job ${id}. list_jobs shows yours.`);
    return job;
  };
  return [
    {
      name: 'create_job',
      description:
        'Start a background job: work that goes on after this conversation turn (research, several steps, anything long). ' +
        'It runs on its own with the tools it is given, shows its progress here, and posts its result here.',
      parameters: createParams,
      readOnly: false,
      requiresApproval: () => 'unlessAutoApproved',
      describe: ({ title }) => `Start the background job "${title}".`,
      async grants(params, ctx) {
        const tools = await deps.grants.spell(params.tools, ctx);
        return { tools, params: { ...params, tools } };
      },
      precheck: (params, ctx) => checkJobRequest(deps.jobs, ctx.userId, params, deps.config.jobs),
      async execute(params, ctx) {
        checkJobBounds(params, deps.config.jobs);
        const record = await deps.history.get(ctx.threadKey);
        if (!record) throw new ToolError('this conversation is not known yet; try again after one message.');
        const { jobs } = deps.config;
        // Approved in a prompt that showed them: the tools as shown. Otherwise only what the creator runs unasked here.
        const spelled = await deps.grants.spell(params.tools, ctx);
        const tools = ctx.approvedInPrompt ? spelled : await deps.grants.standing(spelled, ctx);
        const standing = !ctx.approvedInPrompt && ctx.approval.kind === 'chat' ? { standing: ctx.approval.chatKind } : {};
        const job = await deps.scheduler().create({
          title: params.title.trim(),
          goal: params.goal.trim(),
          owner: ctx.userId,
          ownerName: ctx.userName ?? ctx.userId,
          origin: record.chat,
          tools,
          ...standing,
          plan: params.plan ?? false,
          // The conversation's model now: a later /model use there does not move a job already asked for.
          ...(record.model ? { model: record.model } : {}),
          ...(record.attachments?.length ? { files: recentFiles(record) } : {}),
          maxIterations: params.maxIterations ?? jobs.maxIterations,
          timeoutMs: Math.round((params.timeoutMinutes ?? jobs.timeoutMinutes) * 60_000),
        });
        return JSON.stringify({ id: job.id, state: job.state });
      },
    },
    {
      name: 'list_jobs',
      description: 'List your background jobs, newest first, optionally only those in one state.',
      parameters: listParams,
      readOnly: true,
      requiresApproval: () => 'never',
      async execute({ state }, ctx) {
        const jobs = await deps.jobs.list({ owner: ctx.userId, ...(state ? { states: [state] } : {}) });
        if (!jobs.length) return state ? `You have no ${state} jobs.` : 'You have no jobs.';
        return jobs.slice(0, 50).map((job) => jobStatusLine(job)).join('\n');
      },
    },
    {
      name: 'job_status',
      description: 'The state of one of your background jobs, what it is doing, and its result once it ended.',
      parameters: idParams,
      readOnly: true,
      requiresApproval: () => 'never',
      async execute({ id }, ctx) {
        const job = await ownJob(id, ctx);
        return JSON.stringify({ id: job.id, title: job.title, state: job.state, steps: job.stepCount, activity: job.activity, result: job.result });
      },
    },
    {
      name: 'cancel_job',
      description: 'Cancel one of your background jobs that has not ended.',
      parameters: idParams,
      readOnly: false,
      requiresApproval: () => 'never',
      async execute({ id }, ctx) {
        refuseInGroup(ctx, 'A job can be cancelled');
        await ownJob(id, ctx);
        const result = await deps.scheduler().cancel(id.trim(), ctx.userName ?? ctx.userId);
        if (!result.ok) throw new ToolError(result.message);
        return result.message;
      },
    },
    {
      name: 'job_message',
      description: 'Send a message to one of your running background jobs: it reads it before its next step and re-evaluates.',
      parameters: messageParams,
      readOnly: false,
      requiresApproval: () => 'never',
      async execute({ id, text }, ctx) {
        refuseInGroup(ctx, 'A job can be sent a message');
        await ownJob(id, ctx);
        const result = await deps.scheduler().message(id.trim(), text);
        if (!result.ok) throw new ToolError(result.message);
        return result.message;
      },
    },
  ];
}
