/**
 * The operations endpoint (SPEC section 15), on when `PINCER_HTTP_PORT` is
 * set (`http.host`, default 127.0.0.1):
 *
 * - `GET /healthz`: the process is alive (200).
 * - `GET /readyz`: 200 when the store answers and every configured channel
 *   started and is receiving (its `health()`); 503 with the reasons otherwise
 *   (and while stopping).
 * - `/console/...`: the web console (section 18, src/http/console/), when on.
 * - `GET /metrics`: Prometheus text (prom-client) of the agent's events: turns
 *   and their duration, model requests with errors, latency, tokens and cost,
 *   tool calls by tool (a name no registered tool has counts as `unknown`) and
 *   outcome, approvals by outcome, messages in and out by channel, queued
 *   messages, active threads, jobs by state, attached files by kind and outcome; with several instances on Redis,
 *   the shared inboxes' depth and open threads.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import type { Runtime } from '../chat/runtime.js';
import type { AgentServices } from '../engine/services.js';
import type { Channel } from '../channels/types.js';
import type { Deployment } from '../deployment/types.js';
import { JOB_STATES } from '../jobs/job.js';
import type { JobStore } from '../jobs/job-store.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';

/** How long the store has to answer a readiness probe. */
const STORE_PROBE_MS = 2_000;

/**
 * The tool label of a call to a name no registered tool has: such a name is
 * whatever the model wrote, and as a label of its own it could add series
 * without end or carry any text into the metrics.
 */
export const UNKNOWN_TOOL_LABEL = 'unknown';

/** What the metrics read besides the agent's events: the jobs' states, and the backlog shared by the instances (when they share one). */
export interface MetricSources {
  jobs: Pick<JobStore, 'list'>;
  backlog?: () => Promise<{ messages: number; threads: number }>;
}

/** The metrics of a running bot, fed by its events. */
export function createMetrics(services: AgentServices, runtime: Runtime, sources: MetricSources): Registry {
  const registry = new Registry();
  const { events } = services;
  const turns = new Counter({ name: 'pincer_turns_total', help: 'Turns that ended, by outcome', labelNames: ['outcome'], registers: [registry] });
  const turnSeconds = new Histogram({ name: 'pincer_turn_duration_seconds', help: 'Duration of turns', buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300], registers: [registry] });
  const requests = new Counter({ name: 'pincer_model_requests_total', help: 'Model requests, by purpose and error kind (none: succeeded)', labelNames: ['purpose', 'error'], registers: [registry] });
  const requestSeconds = new Histogram({ name: 'pincer_model_request_duration_seconds', help: 'Latency of model requests', buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120], registers: [registry] });
  const tokens = new Counter({ name: 'pincer_model_tokens_total', help: 'Tokens of model requests, by direction', labelNames: ['direction'], registers: [registry] });
  const cost = new Counter({ name: 'pincer_model_cost_usd_total', help: 'Cost of model requests in US dollars', registers: [registry] });
  const tools = new Counter({ name: 'pincer_tool_calls_total', help: 'Tool calls, by tool and outcome', labelNames: ['tool', 'status'], registers: [registry] });
  const toolSeconds = new Histogram({ name: 'pincer_tool_call_duration_seconds', help: 'Duration of tool calls', labelNames: ['tool'], buckets: [0.01, 0.1, 0.5, 1, 5, 15, 60], registers: [registry] });
  const approvals = new Counter({ name: 'pincer_approvals_total', help: 'Approval questions, by outcome (requested when asked)', labelNames: ['status'], registers: [registry] });
  const inbound = new Counter({ name: 'pincer_channel_events_in_total', help: 'Events received, by channel and type', labelNames: ['channel', 'type'], registers: [registry] });
  const outbound = new Counter({ name: 'pincer_channel_events_out_total', help: 'Platform sends and edits, by channel, type and result', labelNames: ['channel', 'type', 'ok'], registers: [registry] });
  const attachments = new Counter({ name: 'pincer_attachments_total', help: 'Files attached to messages, by channel, kind and outcome (saved, or why refused)', labelNames: ['channel', 'kind', 'outcome'], registers: [registry] });
  const attachmentBytes = new Counter({ name: 'pincer_attachment_bytes_total', help: 'Bytes of the attached files saved, by channel and kind', labelNames: ['channel', 'kind'], registers: [registry] });
  new Gauge({
    name: 'pincer_active_threads',
    help: 'Threads with a runner (working or recently active)',
    registers: [registry],
    collect() {
      this.set(runtime.health().activeThreads);
    },
  });
  new Gauge({
    name: 'pincer_queued_messages',
    help: 'Messages waiting for their thread',
    registers: [registry],
    collect() {
      this.set(runtime.health().queuedMessages);
    },
  });
  const shared = sources.backlog;
  if (shared) {
    // Both gauges come from one read of Redis per scrape.
    let read: { at: number; backlog: Promise<{ messages: number; threads: number }> } | undefined;
    const backlog = () => {
      if (!read || Date.now() - read.at > 1_000) read = { at: Date.now(), backlog: shared() };
      return read.backlog;
    };
    // The bot's whole backlog on Redis, the same on every instance (pincer_queued_messages is this instance's share).
    new Gauge({
      name: 'pincer_inbox_messages',
      help: 'Messages in the shared per-thread inboxes on Redis, waiting for their thread (all instances)',
      registers: [registry],
      async collect() {
        this.set((await backlog()).messages);
      },
    });
    new Gauge({
      name: 'pincer_open_threads',
      help: 'Threads with work not finished on Redis (all instances)',
      registers: [registry],
      async collect() {
        this.set((await backlog()).threads);
      },
    });
  }
  new Gauge({
    name: 'pincer_jobs',
    help: 'Background jobs, by state',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const jobs = await sources.jobs.list();
      for (const state of JOB_STATES) this.set({ state }, jobs.filter((job) => job.state === state).length);
    },
  });
  events.on('turn.ended', (event) => {
    turns.inc({ outcome: event.outcome });
    turnSeconds.observe(event.durationMs / 1000);
  });
  events.on('model.request', (event) => {
    requests.inc({ purpose: event.purpose, error: event.error ?? 'none' });
    requestSeconds.observe(event.durationMs / 1000);
    tokens.inc({ direction: 'input' }, event.inputTokens);
    tokens.inc({ direction: 'output' }, event.outputTokens);
    if (event.costUsd) cost.inc(event.costUsd);
  });
  events.on('tool.call', (event) => {
    const tool = services.registry.get(event.tool) ? event.tool : UNKNOWN_TOOL_LABEL;
    tools.inc({ tool, status: event.status });
    toolSeconds.observe({ tool }, event.durationMs / 1000);
  });
  events.on('approval', (event) => approvals.inc({ status: event.status }));
  events.on('message.in', (event) => inbound.inc({ channel: event.channel, type: event.type }));
  events.on('message.out', (event) => outbound.inc({ channel: event.channel, type: event.type, ok: String(event.ok) }));
  events.on('attachment', (event) => {
    attachments.inc({ channel: event.channel, kind: event.kind, outcome: event.reason ?? event.outcome });
    if (event.sizeBytes !== undefined) attachmentBytes.inc({ channel: event.channel, kind: event.kind }, event.sizeBytes);
  });
  return registry;
}

/**
 * The reasons the bot is not ready; empty when it is. `findChannel` finds a
 * started channel by name, to ask whether it is receiving.
 */
export async function notReadyReasons(runtime: Runtime, store: Store, findChannel: (name: string) => Channel | undefined): Promise<string[]> {
  const reasons: string[] = [];
  const health = runtime.health();
  if (health.stopping) reasons.push('shutting down');
  const missing = health.channels.filter((channel) => !health.startedChannels.includes(channel));
  if (missing.length) reasons.push(`channels not started: ${missing.join(', ')}`);
  reasons.push(...channelReasons(health.startedChannels, findChannel));
  try {
    const probe = store.namespace('health', z.unknown());
    await Promise.race([probe.get('probe'), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer in ${STORE_PROBE_MS / 1000} s`)), STORE_PROBE_MS).unref())]);
  } catch (error) {
    reasons.push(`store unreachable: ${error instanceof Error ? error.message : String(error)}`);
  }
  return reasons;
}

/** Why started channels are not receiving; a channel without `health()` counts as ready. */
function channelReasons(names: string[], findChannel: (name: string) => Channel | undefined): string[] {
  return names.flatMap((name) => {
    const health = findChannel(name)?.health?.();
    if (!health || health.ready) return [];
    return [health.reason ?? `${name}: not receiving`];
  });
}

/** The listening endpoint. */
export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/** Starts the endpoint on `host:port` (port 0: any free port). */
export async function startOpsServer(options: {
  host: string;
  port: number;
  runtime: Runtime;
  services: AgentServices;
  jobs: Pick<JobStore, 'list'>;
  deployment: Pick<Deployment, 'backlog'>;
  store: Store;
  log: Logger;
  /** The web console under `/console` (section 18), when it is on. */
  console?: { handle(request: IncomingMessage, response: ServerResponse): Promise<boolean>; close(): void };
}): Promise<OpsServer> {
  const backlog = options.deployment.backlog?.bind(options.deployment);
  const metrics = createMetrics(options.services, options.runtime, { jobs: options.jobs, ...(backlog ? { backlog } : {}) });
  const channelOf = (name: string) => options.services.outbox.channelOf({ channel: name, chatId: '' });
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type });
      response.end(body);
    };
    if (options.console && (path === '/console' || path?.startsWith('/console/'))) {
      void options.console.handle(request, response);
      return;
    }
    if (request.method !== 'GET') return send(405, 'only GET\n');
    if (path === '/healthz') return send(200, 'ok\n');
    if (path === '/readyz') {
      void notReadyReasons(options.runtime, options.store, channelOf).then((reasons) => (reasons.length ? send(503, `not ready: ${reasons.join('; ')}\n`) : send(200, 'ready\n')));
      return;
    }
    if (path === '/metrics') {
      void metrics.metrics().then(
        (text) => send(200, text, metrics.contentType),
        (error: unknown) => {
          options.log.error({ err: error }, 'metrics failed');
          send(500, 'metrics failed\n');
        },
      );
      return;
    }
    send(404, 'not found: /healthz, /readyz and /metrics are served\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  options.log.info({ host: options.host, port }, 'health and metrics endpoint listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        options.console?.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
