/**
 * What happens in a running agent, as typed events: turns starting and
 * ending, model requests, tool calls, approvals, messages in and out. Metrics
 * and progress displays subscribe; nothing in a turn waits for them, and a
 * failing listener is logged, never felt by the turn.
 */
import type { Logger } from '../log.js';
import type { EndedCall } from '../tools/types.js';

/** What set a unit of a thread's work going. */
export type TurnCause = 'messages' | 'resume' | 'recover';

/** How a turn ended (the loop's outcome, or `error` when it threw). */
export type TurnEnd = 'response' | 'stopped' | 'max_iterations' | 'need_approval' | 'failure' | 'error';

/** What a loop guard did: told the model it repeats itself, forced a text answer, asked the person (Continue/Stop), or stopped the run. */
export type GuardAction = 'warning' | 'forced_answer' | 'question' | 'stopped';

/** A loop guard acting on a run, as the loop reports it to its delegate. */
export interface GuardFired {
  action: GuardAction;
  /** Which guard: a detector's name (`similar`, `window`, `cycle`, `failures`), or `repeated_failure`, `repeated_success`, `repeated_answer`, `truncated_calls`. */
  guard: string;
  /** What repeated, in words, when the guard said. */
  summary?: string;
}

/** Every event and its payload. Thread keys are `channel:chat[:sub]`; user ids are qualified. */
export interface AgentEventMap {
  /** An inbound event reached the agent (before any limit or access check of the agent). */
  'message.in': { channel: string; thread: string; type: 'message' | 'command' | 'approval' };
  /** Something was sent or edited on a platform; `ok` false once every attempt failed. */
  'message.out': { channel: string; thread: string; type: 'send' | 'edit' | 'approval' | 'resolve' | 'file'; ok: boolean; durationMs: number };
  /** A thread's unit of work began. */
  'turn.started': { thread: string; userId: string; cause: TurnCause };
  /** It ended; `iterations` counts the model calls of the loop. */
  'turn.ended': { thread: string; userId: string; cause: TurnCause; outcome: TurnEnd; iterations: number; durationMs: number };
  /** The final message of the thread's last turn was delivered (or given up): it is sent after `turn.ended`, outside the turn's slot. */
  'turn.delivered': { thread: string };
  /** A model request finished (or failed, with the error's kind). */
  'model.request': {
    thread: string;
    model: string;
    /** A chat reply, a summary of older turns, a job's step, its plan, or the check after a plan. */
    purpose: 'reply' | 'compaction' | 'job_step' | 'planning' | 'completion_check';
    durationMs: number;
    inputTokens: number;
    outputTokens: number;
    /** What the call cost, in US dollars (0 for a model without a price). */
    costUsd?: number;
    error?: string;
  };
  /** A tool call ended, in chat or in a job, approved or not: the tool pipeline reports each one once. */
  'tool.call': EndedCall;
  /** A job's run began or ended (`thread` is `job:<id>`); its steps are its model requests and tool calls. */
  'job.run': { thread: string; userId: string; phase: 'started' | 'ended'; outcome?: string };
  /** A routine fired: a reminder posted, a job started, or the firing skipped or paused. */
  'routine.fired': { routine: string; thread: string; userId: string; startedAt: number; durationMs: number; result: string; jobId?: string };
  /** A file attached to a message was taken in (saved) or refused, by its kind as the platform gave it. */
  'attachment': { channel: string; kind: string; outcome: 'saved' | 'refused'; reason?: string; sizeBytes?: number };
  /** A loop guard acted on a turn (see {@link GuardFired}). */
  'guard': GuardFired & { thread: string };
  /** A thread's older messages were summarised into one (`forced` when the model's context was already exceeded). */
  'compaction': { thread: string; before: number; after: number; forced: boolean };
  /** An approval was asked or ended. */
  'approval': { thread: string; tool: string; status: 'requested' | 'approved' | 'always' | 'denied' | 'continued' | 'stopped' | 'redirected' | 'expired' | 'cancelled' };
}

/** The name of an event. */
export type AgentEventName = keyof AgentEventMap;

/** A listener of one event. */
export type AgentListener<K extends AgentEventName> = (payload: AgentEventMap[K]) => void;

/** The typed event emitter of the agent's services. */
export class AgentEvents {
  private readonly listeners = new Map<AgentEventName, Set<AgentListener<never>>>();

  constructor(private readonly log?: Logger) {}

  /** Subscribes to one event; returns the unsubscribe function. */
  on<K extends AgentEventName>(name: K, listener: AgentListener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(listener as AgentListener<never>);
    return () => set.delete(listener as AgentListener<never>);
  }

  /** Calls every listener of `name` synchronously; a listener that throws is logged and skipped. */
  emit<K extends AgentEventName>(name: K, payload: AgentEventMap[K]): void {
    const set = this.listeners.get(name);
    if (!set?.size) return;
    for (const listener of set) {
      try {
        (listener as AgentListener<K>)(payload);
      } catch (error) {
        this.log?.warn({ err: error, event: name }, 'event listener failed');
      }
    }
  }
}
