/**
 * `/routines`: lists, pauses, resumes, deletes or runs routines, seen as jobs
 * are (admins of a group see those created in its scope, bot owners every
 * one). Only the owner resumes or runs one: its firings run with the owner's
 * grants.
 */
import type { CommandArg } from '../channels/command-grammar.js';
import type { CommandSpec } from '../channels/types.js';
import { visibilityOf, type FeatureCommand } from '../engine/feature.js';
import type { RoutineStore } from './routine.js';
import type { RoutineScheduler } from './scheduler.js';

/** A routine's id. */
const ROUTINE_ARG: CommandArg = { name: 'id', description: 'Routine id (from /routines)', kind: 'word', required: true };

/** The `/routines` command. */
export const ROUTINES_COMMAND: CommandSpec = {
  name: 'routines',
  description: 'Your reminders and scheduled work (admins: every routine here)',
  defaultSub: 'list',
  subcommands: [
    { name: 'list', description: 'List the routines with their next firing' },
    { name: 'pause', description: 'Stop a routine from firing', args: [ROUTINE_ARG] },
    { name: 'resume', description: 'Let a paused routine fire again', args: [ROUTINE_ARG] },
    { name: 'delete', description: 'Delete a routine', args: [ROUTINE_ARG] },
    { name: 'run', description: 'Run a routine now, once', args: [ROUTINE_ARG] },
  ],
};

/** `/routines` with its handler. */
export function routinesCommand(store: RoutineStore, scheduler: RoutineScheduler): FeatureCommand {
  return {
    spec: ROUTINES_COMMAND,
    async run(event, parsed, caller) {
      const userId = caller.userId;
      const visible = await visibilityOf(event, caller);
      if ((parsed.sub ?? 'list') === 'list') {
        const routines = (await store.list(visible.wide ? { scope: event.chat.scope } : { owner: userId })).filter(visible.sees).slice(0, 30);
        if (!routines.length) return 'No routines here. Ask me for a reminder or for something to do on a schedule.';
        return `Routines:\n${routines.map((routine) => `• ${scheduler.describe(routine)}`).join('\n')}`;
      }
      const id = String(parsed.args.id).trim();
      const routine = await store.get(id);
      if (!routine || !visible.sees(routine)) return { text: `There is no routine ${id} of yours here. /routines lists them.`, private: true };
      if ((parsed.sub === 'resume' || parsed.sub === 'run') && routine.owner !== userId) {
        return { text: `Only ${routine.ownerName} can ${parsed.sub} routine ${id}: its firings run with the grants of the person whose routine it is.`, private: true };
      }
      switch (parsed.sub) {
        case 'pause':
          await scheduler.pause(id);
          return `Routine ${id} is paused.`;
        case 'resume': {
          const resumed = await scheduler.resume(id);
          return resumed ? `Routine ${id} is on again: ${scheduler.describe(resumed)}.` : `There is no routine ${id}.`;
        }
        case 'delete':
          await scheduler.delete(id);
          return `Routine ${id} is deleted.`;
        default:
          await scheduler.runNow(id);
          return `Routine ${id} ran now; its schedule is unchanged.`;
      }
    },
  };
}
