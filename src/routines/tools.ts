/**
 * The routine tools (SPEC section 13, a public contract): `schedule` (needs
 * approval; its prompt shows the schedule in plain words and the next three
 * firings), `list_schedules` and `cancel_schedule`, which see only the
 * caller's routines. Offered as one tool source.
 */
import { z } from 'zod';
import type { ThreadHistory } from '../engine/history.js';
import type { Config } from '../config/schema.js';
import { ToolError } from '../errors.js';
import { StaticToolSource } from '../tools/source.js';
import type { GrantRules } from '../tools/grants.js';
import type { Tool } from '../tools/types.js';
import { refuseInGroup } from '../jobs/tools.js';
import { checkRoutineCount } from './limits.js';
import { RoutineStore, type Routine } from './routine.js';
import { describeSchedule, formatTime, isTimeZone, nextFirings, parseSchedule, shortestGap, type Schedule } from './schedule.js';
import type { RoutineScheduler } from './scheduler.js';
import { recentFiles } from '../jobs/files.js';

/** What the routine tools work with; the scheduler exists once the runtime does. */
export interface RoutineToolDeps {
  config: Config;
  routines: RoutineStore;
  history: ThreadHistory;
  /** Which tools a prompt routine's request grants, and which of them run on standing permissions alone. */
  grants: GrantRules;
  scheduler(): RoutineScheduler;
  now?: () => number;
}

const scheduleParams = z.object({
  prompt: z.string().min(1).max(4000).optional().describe('What to do at each firing, run as a background job (for work that needs the model)'),
  message: z.string().min(1).max(2000).optional().describe('A plain reminder sent as is at each firing (no model call)'),
  at: z.string().optional().describe('Once, at this ISO-8601 time, e.g. 2026-05-01T09:00 (in the time zone) or with an offset'),
  every: z.string().optional().describe('Repeatedly, every this long: 30s, 30m, 2h, 1d'),
  from: z.string().optional().describe('With every: the first firing (ISO-8601); default now plus the interval'),
  cron: z.string().optional().describe('On a 5-field cron expression, e.g. "0 9 * * 1-5" for weekdays at 09:00'),
  timezone: z.string().optional().describe('IANA time zone, e.g. Europe/Berlin (default from config)'),
  name: z.string().min(1).max(80).optional().describe('A short name'),
  tools: z.array(z.string()).max(50).optional().describe('Tools a prompt routine may use without asking (default: none; "*" for every tool you may use)'),
});
const listParams = z.object({});
const cancelParams = z.object({ id: z.string().min(1).max(40).describe('The routine id, e.g. r1a2b3c4d') });

type ScheduleArgs = z.infer<typeof scheduleParams>;

/** The routine tools as a tool source named `routines`. */
export function routineToolSource(deps: RoutineToolDeps): StaticToolSource {
  return new StaticToolSource('routines', routineTools(deps) as unknown as Tool[]);
}

/** The three routine tools. */
export function routineTools(deps: RoutineToolDeps): [Tool<typeof scheduleParams>, Tool<typeof listParams>, Tool<typeof cancelParams>] {
  const now = deps.now ?? Date.now;
  /** The schedule of a call, checked against the minimum interval, or a ToolError saying what is wrong. */
  const planned = (args: ScheduleArgs): { schedule: Schedule; timezone: string } => {
    const timezone = args.timezone?.trim() || deps.config.routines.timezone;
    if (!isTimeZone(timezone)) throw new ToolError(`"${timezone}" is not an IANA time zone such as Europe/Berlin or America/New_York.`);
    if (Boolean(args.prompt) === Boolean(args.message)) throw new ToolError('give exactly one of prompt (work for the model) or message (a plain reminder).');
    const parsed = parseSchedule({ at: args.at, every: args.every, from: args.from, cron: args.cron }, timezone, now());
    if (!parsed.ok) throw new ToolError(parsed.error);
    const minMs = deps.config.routines.minIntervalSeconds * 1_000;
    const gap = shortestGap(parsed.schedule, timezone, now());
    if (gap !== undefined && gap < minMs) {
      throw new ToolError(`that fires every ${Math.round(gap / 1000)} s; routines may fire at most once every ${deps.config.routines.minIntervalSeconds} s. Choose a longer interval.`);
    }
    const schedule = parsed.schedule.kind === 'every' && !args.from ? { ...parsed.schedule, from: now() + parsed.schedule.everyMs } : parsed.schedule;
    return { schedule, timezone };
  };
  return [
    {
      name: 'schedule',
      description:
        'Schedule a reminder (message: sent as is) or recurring work (prompt: run as a background job) in this conversation: ' +
        'once (at), every interval (every) or on a cron expression (cron), in a time zone.',
      parameters: scheduleParams,
      readOnly: false,
      requiresApproval: () => 'unlessAutoApproved',
      describe: (args) => {
        try {
          const { schedule, timezone } = planned(args);
          const what = args.message ? `the reminder "${args.message.slice(0, 120)}"` : `the job "${(args.name ?? args.prompt!).slice(0, 60)}"`;
          const next = nextFirings(schedule, timezone, now(), 3).map((at) => formatTime(at, timezone, now()));
          return `Schedule ${what} ${describeSchedule(schedule, timezone, now())}. Next: ${next.join('; ') || 'none'}.`;
        } catch (error) {
          return `Schedule something (${error instanceof Error ? error.message : 'invalid schedule'})`;
        }
      },
      async grants(args, ctx) {
        // A reminder runs no tools; a prompt routine grants what it names, and nothing by default.
        const tools = args.message ? [] : await deps.grants.spell(args.tools ?? [], ctx);
        return { tools, params: { ...args, tools } };
      },
      precheck: (_args, ctx) => checkRoutineCount(deps.routines, ctx.userId, deps.config.routines),
      async execute(args, ctx) {
        const { schedule, timezone } = planned(args);
        const spelled = args.message ? [] : await deps.grants.spell(args.tools ?? [], ctx);
        // Approved in a prompt that showed them: the tools as shown. Otherwise only what the creator runs unasked here.
        const tools = ctx.approvedInPrompt ? spelled : await deps.grants.standing(spelled, ctx);
        const standing = !ctx.approvedInPrompt && ctx.approval.kind === 'chat' ? { standing: ctx.approval.chatKind } : {};
        const record = await deps.history.get(ctx.threadKey);
        if (!record) throw new ToolError('this conversation is not known yet; try again after one message.');
        const next = nextFirings(schedule, timezone, now(), 1)[0];
        const routine: Routine = {
          id: RoutineStore.newId(),
          name: (args.name ?? args.message ?? args.prompt ?? 'routine').slice(0, 80),
          owner: ctx.userId,
          ownerName: ctx.userName ?? ctx.userId,
          origin: record.chat,
          schedule,
          timezone,
          action: args.message ? { kind: 'message', text: args.message } : { kind: 'prompt', prompt: args.prompt! },
          tools,
          ...standing,
          ...(args.prompt && record.attachments?.length ? { files: recentFiles(record) } : {}),
          enabled: true,
          ...(next !== undefined ? { nextAt: next } : {}),
          skipped: [],
          createdAt: now(),
        };
        await deps.scheduler().add(routine);
        return JSON.stringify({ id: routine.id, next: next !== undefined ? new Date(next).toISOString() : null, when: describeSchedule(schedule, timezone, now()) });
      },
    },
    {
      name: 'list_schedules',
      description: 'List your routines (reminders and scheduled work): what, when, and the next firing.',
      parameters: listParams,
      readOnly: true,
      requiresApproval: () => 'never',
      async execute(_args, ctx) {
        const routines = await deps.routines.list({ owner: ctx.userId });
        if (!routines.length) return 'You have no routines.';
        return routines.map((routine) => deps.scheduler().describe(routine)).join('\n');
      },
    },
    {
      name: 'cancel_schedule',
      description: 'Cancel (delete) one of your routines.',
      parameters: cancelParams,
      readOnly: false,
      requiresApproval: () => 'never',
      async execute({ id }, ctx) {
        refuseInGroup(ctx, 'A routine can be cancelled');
        const routine = await deps.routines.get(id.trim());
        if (!routine || routine.owner !== ctx.userId) throw new ToolError(`you have no routine ${id}. list_schedules shows yours.`);
        await deps.scheduler().delete(routine.id);
        return `Routine ${routine.id} is cancelled.`;
      },
    },
  ];
}
