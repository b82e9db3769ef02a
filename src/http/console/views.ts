/**
 * What each page of the console shows, as JSON-ready objects built for one
 * viewer: the overview, the conversations and one conversation, jobs and
 * routines, the policy, a trace. Every text that came from a person, a tool
 * or the model is redacted as the logs are (configured credentials, known
 * secret shapes, each tool's sensitive arguments); nothing here carries a
 * token, a key or a file URL.
 */
import { qualifiedUserId } from '../../channels/types.js';
import type { ChatMessage } from '../../llm/types.js';
import { SUMMARY_PREFIX } from '../../engine/compaction.js';
import { dayOf } from '../../engine/usage.js';
import { displayJson, redactParams } from '../../tools/stages/sensitive.js';
import type { Trace, TraceSummary } from '../../engine/traces/types.js';
import type { ConsoleDeps } from './deps.js';
import type { DirectoryEntry } from './directory.js';
import type { ErrorCounter } from './errors-window.js';
import { policyScopes, seesConversation, seesWork, type Viewer } from './viewer.js';

/** Days in the overview's chart. */
export const CHART_DAYS = 14;
/** How much of a tool's arguments or result a conversation shows. */
const SHOWN_CHARS = 2_000;

/** A conversation's label: its title, or its kind and chat id. */
function labelOf(entry: DirectoryEntry): string {
  return entry.chat.title ? entry.chat.title : `${entry.chat.kind === 'dm' ? 'DM' : 'group'} ${entry.chat.chatId}`;
}

/** The overview page. */
export async function overview(deps: ConsoleDeps, errors: ErrorCounter) {
  const health = deps.runtime.health();
  const { usage, models } = deps.services;
  const now = Date.now();
  const days = [];
  for (let back = CHART_DAYS - 1; back >= 0; back--) {
    const day = dayOf(now - back * 86_400_000);
    const totals = await usage.totalOn(day);
    days.push({ day, costUsd: totals.costUsd, inputTokens: totals.inputTokens, outputTokens: totals.outputTokens, calls: totals.calls });
  }
  const channels = health.channels.map((name) => {
    const started = health.startedChannels.includes(name);
    const state = deps.services.outbox.channelOf({ channel: name, chatId: '' })?.health?.();
    return { name, state: !started ? 'not started' : state && !state.ready ? (state.reason ?? 'not receiving') : 'receiving' };
  });
  return {
    instances: await instancesOf(deps),
    channels,
    models: models.list().map((choice) => ({ name: choice.name, isDefault: Boolean(choice.isDefault) })),
    uptimeSeconds: Math.floor((now - deps.startedAt) / 1000),
    activeThreads: health.activeThreads,
    queuedMessages: health.queuedMessages,
    turnsInFlight: errors.turnsInFlight(),
    errorsLastHour: errors.lastHour(),
    today: days[days.length - 1],
    days,
  };
}

/** The instances sharing the store (one when there is no cluster, or its list cannot be read now). */
async function instancesOf(deps: ConsoleDeps) {
  if (!deps.instances) return { shared: false, list: [] };
  try {
    const { self, instances } = await deps.instances();
    return { shared: true, list: instances.map((instance) => ({ id: deps.services.outbox.redact(instance.id), channels: instance.channels, self: instance.id === self })) };
  } catch (error) {
    deps.log.warn({ err: error }, 'console: the list of instances could not be read');
    return { shared: true, list: [], unavailable: true };
  }
}

/** The conversations `viewer` may see, with each one's cost so far. */
export async function conversations(deps: ConsoleDeps, viewer: Viewer) {
  const visible = (await deps.directory.entries()).filter((entry) => seesConversation(viewer, entry.chat)).slice(0, 100);
  return Promise.all(
    visible.map(async (entry) => {
      const record = await deps.services.history.get(entry.key);
      return {
        key: entry.key,
        channel: entry.chat.channel,
        kind: entry.chat.kind,
        label: deps.services.outbox.redact(labelOf(entry)),
        lastAt: entry.lastAt,
        turns: record?.turns ?? 0,
        costUsd: record?.usage.costUsd ?? 0,
      };
    }),
  );
}

/** The directory entry of `key` when `viewer` may see it. */
export async function visibleConversation(deps: ConsoleDeps, viewer: Viewer, key: string): Promise<DirectoryEntry | undefined> {
  const entry = (await deps.directory.entries()).find((known) => known.key === key);
  return entry && seesConversation(viewer, entry.chat) ? entry : undefined;
}

/** One conversation: its messages and tool calls (redacted), pending approval and recent traces. */
export async function conversation(deps: ConsoleDeps, entry: DirectoryEntry) {
  const { history, approvals, outbox } = deps.services;
  const record = await history.get(entry.key);
  const pending = await approvals.pendingFor(entry.key);
  const traces: TraceSummary[] = deps.traces ? await deps.traces.recent({ thread: entry.key, limit: 20 }) : [];
  const messages = record?.messages ?? [];
  const redact = conversationRedactor(deps, [...messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : [])), ...(pending ? [pending.call] : [])]);
  return {
    key: entry.key,
    label: outbox.redact(labelOf(entry)),
    kind: entry.chat.kind,
    turns: record?.turns ?? 0,
    costUsd: record?.usage.costUsd ?? 0,
    messages: messages.slice(-200).flatMap((message) => shownMessage(deps, message, redact)),
    pendingApproval: pending ? { tool: pending.call.name, summary: redact(pending.summary), expiresAt: pending.expiresAt } : undefined,
    traces: traces.map((trace) => ({ id: trace.id, kind: trace.kind, startedAt: trace.startedAt, durationMs: trace.durationMs, outcome: trace.outcome, spanCount: trace.spanCount, costUsd: trace.costUsd })),
    tracesRecorded: Boolean(deps.traces),
    marks: deps.marks.of(entry.key).map((mark) => (mark.kind === 'guard' && mark.summary ? { ...mark, summary: redact(mark.summary) } : mark)),
  };
}

/**
 * The logs' redactor, plus the values of the sensitive arguments of the
 * conversation's tool calls: a loop guard's words, or the question it asked,
 * quote a call's arguments as the model sent them.
 */
function conversationRedactor(deps: ConsoleDeps, calls: ReadonlyArray<{ name: string; arguments: string }>): (text: string) => string {
  const secrets = new Set<string>();
  for (const call of calls) {
    const sensitive = deps.services.registry.get(call.name)?.tool.sensitiveParams;
    if (!sensitive?.length) continue;
    try {
      const parsed = JSON.parse(call.arguments) as Record<string, unknown>;
      for (const key of sensitive) {
        const value = parsed?.[key];
        if (value !== undefined && value !== null) secrets.add(typeof value === 'string' ? value : JSON.stringify(value));
      }
    } catch {
      // Arguments that are not JSON name no sensitive value.
    }
  }
  // Longest first, so that a value inside another is not left half shown; very short values would blank ordinary words.
  const values = [...secrets].filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
  return (text) => values.reduce((shown, value) => shown.split(value).join('[redacted]'), deps.services.outbox.redact(text));
}

/** A stored message as the page shows it: system prompts left out, everything redacted (by `redact`, and each tool's sensitive arguments). */
function shownMessage(deps: ConsoleDeps, message: ChatMessage, redact: (text: string) => string) {
  const redactor = { redact };
  switch (message.role) {
    case 'system':
      return [];
    case 'user':
      // The summary that replaced the older messages when the history was compacted.
      if (message.content.startsWith(SUMMARY_PREFIX)) return [{ role: 'summary', text: redact(message.content.slice(SUMMARY_PREFIX.length)) }];
      return [{ role: 'user', text: redact(message.content) }];
    case 'tool':
      return [{ role: 'tool', callId: message.toolCallId, text: redact(message.content.slice(0, SHOWN_CHARS + 512)).slice(0, SHOWN_CHARS) }];
    default: {
      const calls = (message.toolCalls ?? []).map((call) => {
        const sensitive = deps.services.registry.get(call.name)?.tool.sensitiveParams;
        let args: unknown = call.arguments;
        try {
          const parsed: unknown = JSON.parse(call.arguments);
          args = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? redactParams(parsed as Record<string, unknown>, sensitive) : parsed;
        } catch {
          // Arguments the model wrote as invalid JSON are shown as the text they are.
        }
        return { id: call.id, tool: call.name, args: displayJson(args, redactor, SHOWN_CHARS) };
      });
      return [{ role: 'assistant', text: message.content === null ? '' : redact(message.content), calls }];
    }
  }
}

/** Jobs and routines `viewer` may see. */
export async function work(deps: ConsoleDeps, viewer: Viewer) {
  const { jobs, routines, outbox } = deps.services;
  const redact = (text: string) => outbox.redact(text);
  const visibleJobs = (await jobs.list()).filter((job) => seesWork(viewer, job)).slice(0, 100);
  const visibleRoutines = (await routines.list()).filter((routine) => seesWork(viewer, routine)).slice(0, 100);
  return {
    jobs: visibleJobs.map((job) => ({
      id: job.id,
      title: redact(job.title),
      state: job.state,
      owner: redact(job.ownerName),
      mine: job.owner === viewer.userId,
      createdAt: job.createdAt,
      updatedAt: job.updatedAt,
      steps: job.stepCount,
    })),
    routines: visibleRoutines.map((routine) => ({
      id: routine.id,
      name: redact(routine.name),
      enabled: routine.enabled,
      owner: redact(routine.ownerName),
      mine: routine.owner === viewer.userId,
      nextAt: routine.enabled ? routine.nextAt : undefined,
      lastAt: routine.lastAt,
      schedule: redact(deps.routineScheduler.describe(routine)),
    })),
  };
}

/** The scopes whose policy `viewer` may see, each with every tool's mode and where it was set. */
export async function policy(deps: ConsoleDeps, viewer: Viewer) {
  const known = [...new Set((await deps.directory.entries()).filter((entry) => entry.chat.kind === 'group').map((entry) => entry.chat.scope))];
  const scopes = policyScopes(viewer, known);
  const titles = new Map((await deps.directory.entries()).map((entry) => [entry.chat.scope, entry.chat.title]));
  return Promise.all(
    scopes.map(async (scope) => ({
      scope,
      label: scope === 'global' ? 'Global' : deps.services.outbox.redact(titles.get(scope) ?? scope),
      tools: (await deps.services.policy.list(scope)).map((entry) => ({ tool: entry.tool, mode: entry.mode, source: entry.source })),
    })),
  );
}

/** A trace, when `viewer` may see its thread (background work: when they may see the job or routine). */
export async function trace(deps: ConsoleDeps, viewer: Viewer, id: string): Promise<Trace | undefined> {
  const found = await deps.traces?.get(id);
  if (!found) return undefined;
  if (viewer.role === 'owner') return found;
  if (found.kind === 'turn') return (await visibleConversation(deps, viewer, found.thread)) ? found : undefined;
  const job = await deps.services.jobs.get(found.thread);
  const routine = job ? undefined : await deps.services.routines.get(found.thread);
  const owned = job ?? routine;
  return owned && seesWork(viewer, owned) ? found : undefined;
}

/** The qualified id of a command's sender, re-exported for the routes. */
export { qualifiedUserId };
