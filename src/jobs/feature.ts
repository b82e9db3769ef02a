/**
 * Background jobs as a feature: the job tools, `/jobs`, the scheduler that
 * runs them on the deployment's work queue, and the jobs' approval questions,
 * which the runtime hands back here when their owner answers.
 */
import type { Config } from '../config/schema.js';
import type { WorkQueue } from '../deployment/types.js';
import type { Feature, FeatureHost } from '../engine/feature.js';
import type { AgentServices } from '../engine/services.js';
import type { GrantRules } from '../tools/grants.js';
import { jobsCommand } from './commands.js';
import type { JobHost } from './job-runs.js';
import type { JobStore } from './job-store.js';
import type { MailNotices } from './mailbox.js';
import { JobScheduler } from './scheduler.js';
import { jobToolSource } from './tools.js';

/** The jobs feature, with its store and scheduler for the features built on it (routines). */
export interface JobsFeature extends Feature {
  readonly store: JobStore;
  readonly scheduler: JobScheduler;
}

/** What the jobs feature is built from. */
export interface JobsFeatureDeps {
  config: Config;
  services: AgentServices;
  store: JobStore;
  queue: WorkQueue;
  grants: GrantRules;
  /** How a message to a job reaches the instance running it. */
  mail: MailNotices;
}

/** Builds the jobs feature; its scheduler asks questions through the runtime once started. */
export function jobsFeature({ config, services, store, queue, grants, mail }: JobsFeatureDeps): JobsFeature {
  let host: FeatureHost | undefined;
  const started = (): FeatureHost => {
    if (!host) throw new Error('the jobs feature has not started');
    return host;
  };
  const asking: JobHost = {
    ask: (approval) => started().ask(approval),
    cancelQuestion: (threadKey, by) => started().cancelQuestion(threadKey, by),
  };
  const scheduler = new JobScheduler(services, store, asking, queue, mail);
  return {
    name: 'jobs',
    store,
    scheduler,
    tools: [jobToolSource({ config, jobs: store, history: services.history, scheduler: () => scheduler, grants })],
    commands: [jobsCommand(store, scheduler)],
    resumes: { kind: 'job', resume: (approval, how) => void scheduler.resume(approval, how) },
    async start(runtime) {
      host = runtime;
      await scheduler.start();
    },
    stop: () => scheduler.stop(),
  };
}
