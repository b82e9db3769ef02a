/**
 * The limit on routines (SPEC section 13): how many one person may have
 * (`routines.maxPerUser`). A refusal names the limit and its value.
 */
import type { Config } from '../config/schema.js';
import { ToolError } from '../errors.js';
import type { RoutineCountCheck, RoutineStore } from './routine.js';

/** The reason a person with `count` routines may not have another, or undefined when they may. */
export function routineCountRefusal(count: number, config: Config['routines']): string | undefined {
  const limit = config.maxPerUser;
  if (count < limit) return undefined;
  return `you already have ${count} routine${count === 1 ? '' : 's'} (routines.maxPerUser is ${limit}); cancel one first (list_schedules shows them, finished one-time ones included).`;
}

/** The check {@link RoutineStore.create} makes atomically with listing a new routine. */
export function routineCountCheck(config: Config['routines']): RoutineCountCheck {
  return (count) => routineCountRefusal(count, config);
}

/**
 * Refuses a new routine of `owner` past the limit, before anyone is asked to
 * approve it (the atomic count is made again when it is stored).
 *
 * @throws ToolError naming the limit and its value
 */
export async function checkRoutineCount(routines: RoutineStore, owner: string, config: Config['routines']): Promise<void> {
  const refusal = routineCountRefusal((await routines.list({ owner })).length, config);
  if (refusal) throw new ToolError(refusal);
}
