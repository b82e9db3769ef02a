/**
 * The composition root: builds the store, the model provider, the tools, the
 * channels and the runtime from one validated configuration.
 */
import { z } from 'zod';
import { ApprovalBook } from './engine/approval-book.js';
import { COMMANDS } from './chat/commands.js';
import { DeliveryLog } from './engine/deliveries.js';
import { AgentEvents } from './engine/events.js';
import { ThreadHistory } from './engine/history.js';
import { Outbox } from './engine/outbox.js';
import { Runtime } from './chat/runtime.js';
import { TurnJournal } from './engine/turn-journal.js';
import type { AgentServices } from './engine/services.js';
import { UsageLedger } from './engine/usage.js';
import { bookingTtlMs, LocalCostBudget } from './engine/budget.js';
import type { Channel, ChannelDeps } from './channels/types.js';
import type { Config } from './config/schema.js';
import { PINCER_VERSION } from './cli/version.js';
import { startOpsServer, type OpsServer } from './http/server.js';
import { JobStore } from './jobs/job-store.js';
import { mcpSecrets } from './mcp/secrets.js';
import { McpServerSource } from './mcp/server-source.js';
import { isRedisUrl } from './store/url.js';
import { ClusterMembers } from './cluster/members.js';
import { ClusterNode, instanceIdOf } from './cluster/node.js';
import { RedisRateLimiter, RedisSharedBudget } from './cluster/rate-limits.js';
import { RedisCostBudget } from './cluster/cost-budget.js';
import { RedisElection } from './cluster/redis-election.js';
import { RedisSenderRate } from './cluster/sender-rate.js';
import { RedisSettingsVersion } from './cluster/settings-version.js';
import { RedisThreadStorage } from './cluster/thread-storage.js';
import { ClusterThreads } from './cluster/threads.js';
import { KeyvThreadStorage } from './engine/thread-log.js';
import { firingClaimsFor } from './routines/claims.js';
import { RoutineStore } from './routines/routine.js';
import { routineToolSource } from './routines/tools.js';
import { jobToolSource } from './jobs/tools.js';
import { ModelCatalog } from './llm/models.js';
import { OpenAiProvider } from './llm/openai-provider.js';
import type { LlmProvider } from './llm/types.js';
import { silentLogger, type Logger } from './log.js';
import { createRedactor } from './safety/secrets.js';
import { Store } from './store/store.js';
import { createAuditLog } from './tools/audit.js';
import { builtinToolSource } from './tools/builtin/index.js';
import { createGrantRules } from './tools/grants.js';
import { createPermissionStore } from './tools/permissions.js';
import { createToolPipeline } from './tools/pipeline.js';
import { createPolicyStore } from './tools/policy.js';
import { createToolRegistry } from './tools/registry.js';
import { StaticToolSource, type ToolSource } from './tools/source.js';
import type { Tool } from './tools/types.js';

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
}

/** A built application. */
export interface App {
  runtime: Runtime;
  services: AgentServices;
  store: Store;
  /** Starts the channels and the event loop. */
  start(): Promise<void>;
  /** Graceful shutdown, then the store is closed. Calling it again waits for the first call. */
  stop(reason?: string): Promise<void>;
}

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

  const registry = createToolRegistry({ log });
  registry.addSource(builtinToolSource(config, { store }));
  if (options.tools?.length) registry.addSource(new StaticToolSource('app', options.tools));
  for (const source of options.toolSources ?? []) registry.addSource(source);
  // On a Redis store this instance is one of possibly several: threads are shared through leases.
  const cluster = isRedisUrl(store.url) ? await joinCluster(config, store.url, log) : undefined;
  // Each instance keeps policy and permissions in memory; on a shared store every read checks their version first.
  const settingsVersion = cluster ? new RedisSettingsVersion(cluster.node, log) : undefined;
  const permissions = createPermissionStore(store, registry, settingsVersion);
  const audit = createAuditLog(store, { log });
  const policy = createPolicyStore({ store, catalog: registry, audit, version: settingsVersion });
  cluster?.node.onMessage((message) => {
    if (message.type !== 'settings') return;
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
    ...(cluster ? { rateLimiter: new RedisRateLimiter(cluster.node.redis) } : {}),
  });
  const providerOptions = { logger: log, redact: (text: string) => redactor.redact(text) };
  const provider = options.provider ?? new OpenAiProvider(config.llm, providerOptions);
  const models = new ModelCatalog(config.llm, provider, providerOptions);

  // Platform limits that count the bot as a whole (Telegram's messages a second), booked in Redis.
  const sharedBudget = cluster ? new RedisSharedBudget(cluster.node.redis) : undefined;
  const channelDeps = (name: string): ChannelDeps => {
    const state = store.namespace(`channel-state:${name}`, z.unknown());
    return {
      log: log.child({ channel: name }),
      commands: COMMANDS,
      completions: (source) => (source === 'tool' ? registry.names() : source === 'model' ? models.list().map((choice) => choice.name) : []),
      state: {
        get: (key) => state.get(key),
        set: (key, value, ttlMs) => state.set(key, value, ttlMs),
        update: (key, change) => state.update(key, change),
      },
      acknowledges: true,
      ...(cluster ? { election: new RedisElection(cluster.node, log.child({ channel: name }), members.get(name)), sharedBudget } : {}),
    };
  };
  const factories = options.channels ?? (await configuredChannels(config));
  // The live instances of each channel, counted so that Discord's shards are shared out evenly among those that run it.
  const members = new Map(cluster ? factories.map((factory) => [factory.name, new ClusterMembers(cluster.node, log, factory.name)]) : []);
  await Promise.all([...members.values()].map((entry) => entry.join()));
  const channels = await Promise.all(factories.map((factory) => factory.create(channelDeps(factory.name))));
  const channelMap = new Map(channels.map((channel) => [channel.name, channel]));
  const outbox = new Outbox(channelMap, (text) => redactor.redact(text), log, events, new DeliveryLog(store, log));
  const usage = new UsageLedger(store);
  // The daily cost limit is booked where every instance sees it: in Redis when several may share the store.
  const [limit, ttl] = [config.agent.dailyCostLimitUsd, bookingTtlMs(config.llm)];
  const budget = cluster ? new RedisCostBudget(cluster.node.redis, usage, limit, ttl) : new LocalCostBudget(usage, limit, ttl);
  const services: AgentServices = {
    config,
    log,
    provider,
    models,
    pipeline,
    registry,
    permissions,
    policy,
    history: cluster ? new ThreadHistory(store, log, new RedisThreadStorage(cluster.node, cluster.threads, log, new KeyvThreadStorage(store, log))) : new ThreadHistory(store, log),
    approvals: new ApprovalBook(store),
    usage,
    budget,
    outbox,
    journal: new TurnJournal(store, log),
    events,
    jobs: new JobStore(store, log),
    routines: new RoutineStore(store, log),
    firingClaims: firingClaimsFor(config, store),
    ...(cluster ? { cluster } : {}),
  };
  const runtime = new Runtime(services, channels);
  // The job tools reach the runtime's scheduler; they are offered from the start like every source.
  registry.addSource(
    jobToolSource({
      config,
      jobs: services.jobs,
      history: services.history,
      scheduler: () => runtime.jobs,
      grants,
    }),
  );
  for (const [name, server] of Object.entries(config.mcp.servers)) registry.addSource(new McpServerSource(name, server, log.child({ mcp: name }), PINCER_VERSION, { redactor, limits: config.mcp.limits }));
  registry.addSource(routineToolSource({ config, routines: services.routines, history: services.history, grants, scheduler: () => runtime.routines }));
  let stopping: Promise<void> | undefined;
  let ops: OpsServer | undefined;
  const stop = async (reason: string) => {
    await runtime.shutdown(reason);
    await ops?.close();
    await registry.stop();
    await services.usage.flush();
    await services.history.flush();
    await services.journal.durable();
    // Threads held here go back at once: the other instances need not wait for the leases to lapse.
    await cluster?.threads.close();
    await Promise.all([...members.values()].map((entry) => entry.leave()));
    cluster?.node.close();
    await store.close();
  };
  return {
    runtime,
    services,
    store,
    async start() {
      await registry.start();
      // Up before the channels connect: /readyz says what is still missing.
      if (config.http.port !== undefined) ops = await startOpsServer({ host: config.http.host, port: config.http.port, runtime, services, store, log });
      await runtime.start();
    },
    stop(reason = 'stopped') {
      stopping ??= stop(reason);
      return stopping;
    },
  };
}

/** Joins the instances on the Redis store at `url`. */
async function joinCluster(config: Config, url: string, log: Logger): Promise<NonNullable<AgentServices['cluster']>> {
  const node = await ClusterNode.connect(url, instanceIdOf(config.cluster.instanceId), config.cluster.leaseTtlMs, log);
  return { node, threads: new ClusterThreads(node, log), senderRate: new RedisSenderRate(node.redis, config.agent.userMessagesPerMinute) };
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
