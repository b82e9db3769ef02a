/**
 * An instance among several on one Redis store (SPEC section 15): threads are
 * shared through leases and durable inboxes, senders' rates, tools' rate
 * limits and the cost budget are counted in Redis for the whole bot, timers
 * and work queues run on BullMQ, claims are Redis keys, platform duties are
 * elected, and the instances signal each other over pub/sub.
 */
import type { Config } from '../config/schema.js';
import type { ChannelPorts, Deployment, Signals } from '../deployment/types.js';
import type { Outbox } from '../engine/outbox.js';
import { KeyvThreadStorage } from '../engine/thread-log.js';
import type { Logger } from '../log.js';
import type { RedisConnections } from '../store/redis-connections.js';
import type { Store } from '../store/store.js';
import { BullMqTimers } from '../store/timers.js';
import { RedisClaims } from './claims.js';
import { RedisCostBudget } from './cost-budget.js';
import { ClusterIntake } from './intake.js';
import { ClusterMembers, liveInstances } from './members.js';
import { ClusterNode, instanceIdOf } from './node.js';
import { RedisRateLimiter, RedisSharedBudget } from './rate-limits.js';
import { RedisElection } from './redis-election.js';
import { RedisSenderRate } from './sender-rate.js';
import { RedisSettingsVersion } from './settings-version.js';
import { RedisThreadStorage } from './thread-storage.js';
import { ClusterThreads } from './threads.js';
import { BullMqEngine } from './work-queue.js';

/** Claims' names in the store, and the Redis prefix each had before (kept, so that claims made before an upgrade still hold). */
const CLAIM_PREFIXES: Record<string, string> = { 'routine-claims': 'routine-firing' };

/** An instance's deployment among several, with its place among them (for diagnostics and tests). */
export interface ClusterDeployment extends Deployment {
  readonly kind: 'cluster';
  readonly node: ClusterNode;
  readonly threads: ClusterThreads;
}

/** The deployment as one among several instances, or undefined for a single process. */
export function clusterOf(deployment: Deployment): ClusterDeployment | undefined {
  return deployment.kind === 'cluster' ? (deployment as ClusterDeployment) : undefined;
}

/**
 * Joins the instances on the Redis store at `url`. `outbox` is read once the
 * runtime starts (the intake's refusals). Everything here shares the store's
 * connections (one for commands, one for pub/sub; each BullMQ worker adds one
 * blocking connection), or `redis` when given.
 */
export async function clusterDeployment(config: Config, url: string, store: Store, log: Logger, outbox: () => Outbox, redis: RedisConnections | undefined = store.redis): Promise<ClusterDeployment> {
  const node = await ClusterNode.connect(url, instanceIdOf(config.cluster.instanceId), config.cluster.leaseTtlMs, log, redis);
  const connections = node.connections;
  const threads = new ClusterThreads(node, log);
  const senderRate = new RedisSenderRate(node.redis, config.agent.userMessagesPerMinute);
  const sharedBudget = new RedisSharedBudget(node.redis);
  const members: ClusterMembers[] = [];
  const signals: Signals = {
    // The holder of the thread stops it; this instance stops its own part itself.
    stop: async (thread, by) => {
      if (!threads.holds(thread)) await node.publish({ type: 'stop', thread, by });
    },
    onStop: (handler) => {
      node.onMessage((message) => {
        if (message.type === 'stop' && threads.holds(message.thread)) handler(message.thread);
      });
    },
    onSettingsChanged: (handler) => {
      node.onMessage((message) => {
        if (message.type === 'settings') handler();
      });
    },
    // A lost notice only delays the message: a running job reads its mailbox at least every few seconds.
    mail: (id) => node.publish({ type: 'mail', id }).catch((error: unknown) => log.warn({ err: error, job: id }, 'cluster: a job message was not announced')),
    onMail: (handler) => {
      node.onMessage((message) => {
        if (message.type === 'mail') handler(message.id);
      });
    },
  };
  return {
    kind: 'cluster',
    node,
    threads,
    intake: new ClusterIntake(threads, senderRate, config.agent, outbox),
    signals,
    senderRate,
    threadStorage: new RedisThreadStorage(node, threads, log, new KeyvThreadStorage(store, log)),
    toolRateLimiter: new RedisRateLimiter(node.redis),
    settingsVersion: new RedisSettingsVersion(node, log),
    costBudget: (usage, limitUsd, ttlMs) => new RedisCostBudget(node.redis, usage, limitUsd, ttlMs),
    timers: (name) => new BullMqTimers(url, name, log, Date.now, connections),
    claims: (name, ttlMs) => new RedisClaims(connections.command, CLAIM_PREFIXES[name] ?? name, ttlMs),
    workQueue: (name, maxParallel) => new BullMqEngine({ url, queueName: name, maxParallel, log, connections }),
    // The live instances of each channel are counted, so that Discord's shards are shared out evenly among those that run it.
    async channel(name): Promise<ChannelPorts> {
      const channelLog = log.child({ channel: name });
      const entry = new ClusterMembers(node, log, name);
      await entry.join();
      members.push(entry);
      return { election: new RedisElection(node, channelLog, entry), sharedBudget };
    },
    instances: async () => ({ self: node.instanceId, instances: await liveInstances(node) }),
    backlog: () => threads.backlog(),
    async close() {
      // Threads held here go back at once: the other instances need not wait for the leases to lapse.
      await threads.close();
      await Promise.all(members.map((entry) => entry.leave()));
      node.close();
    },
  };
}
