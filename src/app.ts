/**
 * The composition root: builds the store, the model provider, the tools, the
 * channels and the runtime from one validated configuration.
 */
import { z } from 'zod';
import { commandTable } from './chat/command-table.js';
import { Runtime } from './chat/runtime.js';
import type { Channel, ChannelDeps, CommandSpec } from './channels/types.js';
import type { Config } from './config/schema.js';
import { localDeployment } from './deployment/local.js';
import type { Deployment } from './deployment/types.js';
import { ApprovalBook } from './engine/approval-book.js';
import { bookingTtlMs } from './engine/budget.js';
import { DailyBytes } from './engine/attachments/daily-bytes.js';
import { AttachmentIntake } from './engine/attachments/intake.js';
import { StoredTranscriptSchema, transcriptionEndpoint, VoiceTranscripts } from './engine/attachments/voice.js';
import { DeliveryLog } from './engine/deliveries.js';
import { AgentEvents } from './engine/events.js';
import type { TraceRecorder } from './engine/traces/recorder.js';
import type { TraceReader } from './engine/traces/types.js';
import type { Feature } from './engine/feature.js';
import { ThreadHistory } from './engine/history.js';
import { Outbox } from './engine/outbox.js';
import type { AgentServices } from './engine/services.js';
import { TurnJournal } from './engine/turn-journal.js';
import { UsageLedger } from './engine/usage.js';
import type { OpsServer } from './http/server.js';
import type { PreparedConsole } from './http/console/index.js';
import { JOBS_COMMAND } from './jobs/commands.js';
import { jobsFeature, type JobsFeature } from './jobs/feature.js';
import { JOB_QUEUE } from './jobs/engine.js';
import { JobStore } from './jobs/job-store.js';
import { ModelCatalog } from './llm/models.js';
import { OpenAiProvider } from './llm/openai-provider.js';
import type { LlmProvider } from './llm/types.js';
import { silentLogger, type Logger } from './log.js';
import { mcpFeature, MCP_COMMAND } from './mcp/feature.js';
import { mcpSecrets } from './config/mcp-secrets.js';
import { routinesFeature, type RoutinesFeature } from './routines/feature.js';
import { ROUTINES_COMMAND } from './routines/commands.js';
import { RoutineStore } from './routines/routine.js';
import { createRedactor } from './safety/secrets.js';
import { Store } from './store/store.js';
import { isRedisUrl } from './store/url.js';
import { createAuditLog } from './tools/audit.js';
import { builtinToolSource } from './tools/builtin/index.js';
import { createGrantRules } from './tools/grants.js';
import { createPermissionStore } from './tools/permissions.js';
import { createToolPipeline } from './tools/pipeline.js';
import { createPolicyStore } from './tools/policy.js';
import { createToolRegistry } from './tools/registry.js';
import { StaticToolSource, type ToolSource } from './tools/source.js';
import type { Tool } from './tools/types.js';
import { PINCER_VERSION } from './version.js';

/** Makes a channel once the shared pieces exist. */
export interface ChannelFactory {
  /** The channel's name (its persisted state is kept under it). */
  name: string;
  create(deps: ChannelDeps): Channel | Promise<Channel>;
}

/** Options for {@link createApp}; everything but `config` has a production default. */
export interface AppOptions {
  config: Config;
  log?: Logger;
  /** Channels to run; default: every channel whose token is configured. */
  channels?: ChannelFactory[];
  provider?: LlmProvider;
  /** Extra tools (tests, extensions), registered after the built-in ones. */
  tools?: Tool[];
  /** Further tool sources, after the built-in tools and `tools`. */
  toolSources?: ToolSource[];
  store?: Store;
  /** Where the console reads traces from instead of the app's own recorder (tests give a fixture). */
  consoleTraces?: TraceReader;
  /** The console's bundled files (default dist/console). */
  consoleAssetsDir?: string;
}

/** The services of a built application: the agent's, and the stores of its features. */
export type AppServices = AgentServices & { jobs: JobStore; routines: RoutineStore };

/** A built application. */
export interface App {
  runtime: Runtime;
  services: AppServices;
  /** How this instance is deployed (one process, or one of several on Redis). */
  deployment: Deployment;
  /** Background jobs: their store and scheduler. */
  jobs: JobsFeature;
  /** Routines: their store and scheduler. */
  routines: RoutinesFeature;
  store: Store;
  /** The traces of turns, job steps and routine firings: recorded while the console is on or traces are exported. */
  traces?: TraceReader;
  /** Starts the channels and the event loop. */
  start(): Promise<void>;
  /** Graceful shutdown, then the store is closed. Calling it again waits for the first call. */
  stop(reason?: string): Promise<void>;
}

/** Every command a built application knows, the features' included (for the platforms' command menus). */
export const COMMANDS: CommandSpec[] = commandTable([JOBS_COMMAND, ROUTINES_COMMAND, MCP_COMMAND]);

/** The configured credentials, redacted wherever text leaves the process. */
export function configuredSecrets(config: Config): string[] {
  return [
    config.llm.apiKey,
    config.telegram.token,
    config.telegram.webhook.secretToken,
    config.discord.token,
    config.slack.botToken,
    config.slack.appToken,
    config.slack.signingSecret,
    ...config.llm.models.map((entry) => (entry.apiKeyEnv ? process.env[entry.apiKeyEnv] : undefined)),
    ...mcpSecrets(config.mcp),
  ].filter((secret): secret is string => Boolean(secret));
}

/** Builds the application. */
export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const log = options.log ?? silentLogger;
  const store = options.store ?? (await Store.open({ url: config.storeUrl, dataDir: config.dataDir, log, connectTimeoutMs: config.storeConnectTimeoutMs }));
  const secrets = configuredSecrets(config);
  const redactor = createRedactor(secrets);
  // Chosen once: one process on its store, or one of several instances sharing a Redis store.
  const made: { services?: AgentServices } = {};
  const built = (): AgentServices => {
    if (!made.services) throw new Error('the application is not built yet');
    return made.services;
  };
  // The cluster's modules load only with a Redis store.
  const deployment = isRedisUrl(store.url)
    ? await (await import('./cluster/deployment.js')).clusterDeployment(config, store.url, store, log, () => built().outbox)
    : localDeployment(config, store, log, built);

  const registry = createToolRegistry({ log });
  registry.addSource(builtinToolSource(config, { store }));
  if (options.tools?.length) registry.addSource(new StaticToolSource('app', options.tools));
  for (const source of options.toolSources ?? []) registry.addSource(source);
  // Each instance keeps policy and permissions in memory; where they are shared, every read checks their version first.
  const permissions = createPermissionStore(store, registry, deployment.settingsVersion);
  const audit = createAuditLog(store, { log });
  const policy = createPolicyStore({ store, catalog: registry, audit, version: deployment.settingsVersion });
  deployment.signals.onSettingsChanged(() => {
    policy.invalidate();
    permissions.invalidate();
  });
  const grants = createGrantRules({ catalog: registry, policy, permissions });
  const events = new AgentEvents(log);
  const pipeline = createToolPipeline({
    registry,
    permissions,
    policy,
    store,
    redactor,
    log,
    audit,
    onCallEnd: (ended) => events.emit('tool.call', ended),
    config: { toolConcurrency: config.agent.toolConcurrency, maxOutputChars: config.tools.maxOutputChars, maxToolCallsPerBatch: config.agent.maxToolCallsPerBatch },
    // Tools' rate limits hold for the bot as a whole, not per instance.
    ...(deployment.toolRateLimiter ? { rateLimiter: deployment.toolRateLimiter } : {}),
  });
  const providerOptions = { logger: log, redact: (text: string) => redactor.redact(text) };
  const provider = options.provider ?? new OpenAiProvider(config.llm, providerOptions);
  const models = new ModelCatalog(config.llm, provider, providerOptions);

  // The console loads only when it is on and has an endpoint to be served on.
  const consoleOn = config.console.enabled && config.http.port !== undefined;
  const consoleModule = consoleOn ? await import('./http/console/index.js') : undefined;
  const commands = consoleModule ? commandTable([JOBS_COMMAND, ROUTINES_COMMAND, MCP_COMMAND, consoleModule.CONSOLE_COMMAND]) : COMMANDS;
  const channelDeps = async (name: string): Promise<ChannelDeps> => {
    const state = store.namespace(`channel-state:${name}`, z.unknown());
    return {
      log: log.child({ channel: name }),
      commands,
      completions: (source) => (source === 'tool' ? registry.names() : source === 'model' ? models.list().map((choice) => choice.name) : []),
      state: {
        get: (key) => state.get(key),
        set: (key, value, ttlMs) => state.set(key, value, ttlMs),
        update: (key, change) => state.update(key, change),
      },
      acknowledges: true,
      ...(await deployment.channel(name)),
    };
  };
  const factories = options.channels ?? (await configuredChannels(config));
  const channels = await Promise.all(factories.map(async (factory) => factory.create(await channelDeps(factory.name))));
  const channelMap = new Map(channels.map((channel) => [channel.name, channel]));
  const outbox = new Outbox(channelMap, (text) => redactor.redact(text), log, events, new DeliveryLog(store, log));
  const usage = new UsageLedger(store, Date.now, { soleWriter: store.exclusive });
  const services: AgentServices = {
    config,
    log,
    provider,
    models,
    pipeline,
    registry,
    permissions,
    policy,
    history: new ThreadHistory(store, log, deployment.threadStorage),
    approvals: new ApprovalBook(store),
    usage,
    // The daily cost limit is booked where every instance sees it.
    budget: deployment.costBudget(usage, config.agent.dailyCostLimitUsd, bookingTtlMs(config.llm)),
    outbox,
    journal: new TurnJournal(store, log),
    attachments: new AttachmentIntake({
      config,
      channelOf: (name) => channelMap.get(name),
      // Counted in the store, so that every instance books against the same day.
      daily: new DailyBytes(store.namespace('attachment-bytes', z.number()), config.attachments.maxBytesPerUserPerDay),
      // Transcripts, minutes and who was told are kept in the store, so that every instance shares them.
      voice: new VoiceTranscripts({
        endpoint: transcriptionEndpoint(config.llm),
        transcripts: store.namespace('transcripts', StoredTranscriptSchema),
        seconds: store.namespace('transcribed-seconds', z.number()),
        toldOff: store.namespace('transcription-off-told', z.string()),
        log: log.child({ part: 'transcription' }),
      }),
      log: log.child({ part: 'attachments' }),
    }),
    events,
  };
  made.services = services;
  const jobs = jobsFeature({ config, services, store: new JobStore(store, log), queue: deployment.workQueue(JOB_QUEUE, config.jobs.maxParallel), grants, mail: deployment.signals });
  const routines = routinesFeature({ config, services, store: new RoutineStore(store, log), deployment, jobs, grants });
  const appServicesEarly: AppServices = { ...services, jobs: jobs.store, routines: routines.store };
  const webConsole: PreparedConsole | undefined = consoleModule?.prepareConsole({ config, store, services: appServicesEarly, log });
  const features: Feature[] = [jobs, routines, await mcpFeature(config, registry, log, PINCER_VERSION, redactor), ...(webConsole ? [webConsole.feature] : [])];
  // Every feature's tools are offered from the start, like every source.
  for (const feature of features) for (const source of feature.tools ?? []) registry.addSource(source);
  const runtime = new Runtime(services, channels, { deployment, features });
  const traces = config.console.enabled || process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? await recordTraces(config, events, store, log) : undefined;
  // OpenTelemetry's SDK loads only when traces are to be exported.
  const exported = traces && process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? (await import('./engine/traces/otel.js')).exportTraces(traces, { agentName: config.agent.name, version: PINCER_VERSION, log, ...(config.cluster.instanceId ? { instance: config.cluster.instanceId } : {}) }) : undefined;
  const appServices = appServicesEarly;
  const startedAt = Date.now();
  let stopping: Promise<void> | undefined;
  let ops: OpsServer | undefined;
  const stop = async (reason: string) => {
    await runtime.shutdown(reason);
    await ops?.close();
    await registry.stop();
    await traces?.close();
    await exported?.close();
    await usage.flush();
    await built().history.flush();
    await built().journal.durable();
    await deployment.close();
    await store.close();
  };
  return {
    runtime,
    services: appServices,
    deployment,
    jobs,
    routines,
    store,
    ...(traces ? { traces } : {}),
    async start() {
      await registry.start();
      // Up before the channels connect: /readyz says what is still missing.
      // The HTTP server and its metrics library load only when a port is set.
      if (config.http.port !== undefined) {
        const served = webConsole?.serve({
          runtime,
          routineScheduler: routines.scheduler,
          startedAt,
          ...(deployment.instances ? { instances: () => deployment.instances!() } : {}),
          ...(options.consoleTraces ?? traces ? { traces: options.consoleTraces ?? traces } : {}),
          ...(options.consoleAssetsDir ? { assetsDir: options.consoleAssetsDir } : {}),
        });
        ops = await (await import('./http/server.js')).startOpsServer({ host: config.http.host, port: config.http.port, runtime, services: built(), jobs: jobs.store, deployment, store, log, ...(served ? { console: served } : {}) });
        webConsole?.listening(baseUrlOf(config.http.host, ops.port));
      }
      await runtime.start();
    },
    stop(reason = 'stopped') {
      stopping ??= stop(reason);
      return stopping;
    },
  };
}

/** The URL people open to reach the endpoint at `host:port` (a wildcard host is reached as localhost). */
function baseUrlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/** The recorder of traces, loaded only when something reads them. */
async function recordTraces(config: Config, events: AgentEvents, store: Store, log: Logger): Promise<TraceRecorder> {
  const [{ TraceRecorder }, { TraceArchive }] = await Promise.all([import('./engine/traces/recorder.js'), import('./engine/traces/archive.js')]);
  const archive = new TraceArchive(store, { days: config.console.traceDays, log });
  return new TraceRecorder(events, archive, { log, ...(config.cluster.instanceId ? { instance: config.cluster.instanceId } : {}) });
}

/** Factories for every channel whose credentials are configured. Platform libraries load only when used. */
export async function configuredChannels(config: Config): Promise<ChannelFactory[]> {
  const factories: ChannelFactory[] = [];
  if (config.telegram.token) {
    const { TelegramChannel } = await import('./channels/telegram/adapter.js');
    factories.push({ name: 'telegram', create: (deps) => new TelegramChannel(config.telegram, deps, { owners: config.owners }) });
  }
  if (config.discord.token) {
    const { DiscordChannel } = await import('./channels/discord/adapter.js');
    factories.push({ name: 'discord', create: (deps) => new DiscordChannel(config.discord, deps, { owners: config.owners }) });
  }
  if (config.slack.botToken) {
    const { SlackChannel } = await import('./channels/slack/adapter.js');
    // With only a signing secret given, HTTP mode is what the user means.
    const slack = !config.slack.appToken && config.slack.signingSecret ? { ...config.slack, mode: 'http' as const } : config.slack;
    factories.push({ name: 'slack', create: (deps) => new SlackChannel(slack, deps, { owners: config.owners }) });
  }
  return factories;
}
