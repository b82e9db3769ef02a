/**
 * What the console reads and acts through: the application's services, its
 * runtime (health, and commands run as the signed-in person), the store, and
 * the traces when they are recorded.
 */
import type { Runtime } from '../../chat/runtime.js';
import type { Config } from '../../config/schema.js';
import type { AgentServices } from '../../engine/services.js';
import type { TraceReader } from '../../engine/traces/types.js';
import type { JobStore } from '../../jobs/job-store.js';
import type { Logger } from '../../log.js';
import type { RoutineStore } from '../../routines/routine.js';
import type { RoutineScheduler } from '../../routines/scheduler.js';
import type { Store } from '../../store/store.js';
import type { ConversationDirectory } from './directory.js';
import type { ThreadMarks } from './thread-marks.js';

/** See the module comment. */
export interface ConsoleDeps {
  config: Config;
  services: AgentServices & { jobs: JobStore; routines: RoutineStore };
  runtime: Pick<Runtime, 'health' | 'runCommand'>;
  /** Describes a routine's schedule and next firing as `/routines` does. */
  routineScheduler: Pick<RoutineScheduler, 'describe'>;
  store: Store;
  directory: ConversationDirectory;
  /** Loop guards and compactions heard of, per thread. */
  marks: ThreadMarks;
  traces?: TraceReader;
  log: Logger;
  /** The live instances sharing the store, with this one's id; absent on a single process. */
  instances?: () => Promise<{ self: string; instances: Array<{ id: string; channels: string[] }> }>;
  /** When the process started (epoch ms), for the uptime. */
  startedAt: number;
}
