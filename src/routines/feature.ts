/**
 * Routines as a feature: the routine tools, `/routines`, and the scheduler
 * that fires them on the deployment's timers, each firing claimed once.
 */
import type { Config } from '../config/schema.js';
import type { Deployment } from '../deployment/types.js';
import type { Feature } from '../engine/feature.js';
import type { AgentServices } from '../engine/services.js';
import type { JobsFeature } from '../jobs/feature.js';
import type { GrantRules } from '../tools/grants.js';
import { claimTtlMs, FIRING_CLAIMS, type FiringClaims } from './claims.js';
import { routinesCommand } from './commands.js';
import type { RoutineStore } from './routine.js';
import { RoutineScheduler } from './scheduler.js';
import { routineToolSource } from './tools.js';

/** The routines feature, with its scheduler (for tests and the console). */
export interface RoutinesFeature extends Feature {
  readonly store: RoutineStore;
  readonly scheduler: RoutineScheduler;
  /** The claims that make each firing run once. */
  readonly claims: FiringClaims;
}

/** What the routines feature is built from: a prompt routine's firing starts a job. */
export interface RoutinesFeatureDeps {
  config: Config;
  services: AgentServices;
  store: RoutineStore;
  deployment: Pick<Deployment, 'claims' | 'timers'>;
  jobs: Pick<JobsFeature, 'scheduler' | 'store'>;
  grants: GrantRules;
}

/** Builds the routines feature. */
export function routinesFeature({ config, services, store, deployment, jobs, grants }: RoutinesFeatureDeps): RoutinesFeature {
  const claims = deployment.claims(FIRING_CLAIMS, claimTtlMs(config.routines));
  const scheduler = new RoutineScheduler(services, store, claims, deployment.timers('pincer-routines'), { scheduler: () => jobs.scheduler, store: jobs.store });
  return {
    name: 'routines',
    store,
    scheduler,
    claims,
    tools: [routineToolSource({ config, routines: store, history: services.history, grants, scheduler: () => scheduler })],
    commands: [routinesCommand(store, scheduler)],
    start: () => scheduler.start(),
    stop: () => scheduler.stop(),
  };
}
