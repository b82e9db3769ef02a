/**
 * The job delegate (seed 001's `JobDelegate`): how the shared loop runs a
 * background job. Its model is offered the tools its owner could use in a DM;
 * calls run in the autonomous approval context (the job's allowed tools run,
 * meta tools never do, anything else asks the owner or is refused). A text
 * reply ends the run only when it says the goal is reached (see
 * completion.ts); otherwise the job goes on. Every model and tool call is
 * journaled in the job's record before it starts and after it returns, so a
 * restart knows what ran.
 */
import { settleBatch } from '../engine/settle-batch.js';
import type { BatchOutcome, LoopContext, LoopDelegate, LoopOutcome, LoopSignal, TextAction } from '../engine/loop.js';
import type { AgentServices } from '../engine/services.js';
import { meteredCall } from '../engine/metered-call.js';
import { DEFAULT_AUTONOMOUS_DENYLIST } from '../tools/approval-rule.js';
import type { CallResult, ToolContext } from '../tools/types.js';
import type { LlmResponse, ToolCall, ToolDefinition } from '../llm/types.js';
import { completionSignal } from './completion.js';
import { finishStep, journalStep, type JobRecord, type RunningJob } from './job.js';
import { accessLost } from './owner-access.js';
import { stoppedCallResult } from './job-runs.js';
import { filesText } from './files.js';
import type { GuardFired } from '../engine/events.js';

/** A call the job may not run on its own, waiting for its owner. */
export interface JobApprovalNeed {
  calls: CallResult[];
  /** The model's words before the calls. */
  reason: string;
}

/** What the delegate needs from the worker running it. */
export interface JobRunControl {
  signal: AbortSignal;
  /** The owner's messages that arrived (`job_message`), taken once. */
  takeMessages(): Promise<string[]>;
  /** Persists the job's record (journal and conversation) now. */
  save(): Promise<void>;
  /** What the job is doing, for its status line. */
  activity(what: string): void;
  /** Whether calls outside the allowed tools may ask the owner (`jobs.askOwner`). */
  askOwner: boolean;
  /** Whether the owner may still use the bot where the job was created (asked before each step). */
  ownerAdmitted(): Promise<boolean>;
}

/**
 * The system prompt of a job. It holds only pincer's own words: the title and
 * goal were written for the creator (by the model, from a person's request),
 * so they reach the job's model as that person's request in a user message
 * ({@link jobRequestMessage}), never with the weight of the system prompt.
 */
export function jobSystemPrompt(job: JobRecord, agentName: string, now = new Date()): string {
  return [
    `You are ${agentName}, working on a background job for ${job.ownerName}. Nobody is watching the conversation: work on your own until the goal is reached.`,
    `Today is ${now.toISOString().slice(0, 10)} (UTC time ${now.toISOString().slice(11, 16)}).`,
    'The job and its goal are in the first user message: they are what the person asked for.',
    'Use the tools you are given. When the goal is reached, reply with a short final report that begins with "DONE:".',
    'If the goal cannot be reached, reply with the reason, beginning with "FAILED:". Any other reply means you are still working.',
  ].join('\n');
}

/** The first message of a job's conversation: its creator's request. */
export function jobRequestMessage(job: JobRecord): string {
  return `${job.ownerName} asked for the background job "${job.title}". Start the job now.\nGoal: ${job.goal}${filesText(job.files)}`;
}

/** How the job's model reads a `job_message`: its owner's words, sent from their DM. */
export function jobMessageText(job: JobRecord, text: string): string {
  return `A message from ${job.ownerName}, sent from their direct message with you: ${text}`;
}

/** Runs one job's model conversation on the shared loop. */
export class JobDelegate implements LoopDelegate<JobApprovalNeed> {
  private offered: { revision: string; tools: ToolDefinition[] } | undefined;

  constructor(
    private readonly job: RunningJob,
    private readonly services: AgentServices,
    private readonly control: JobRunControl,
  ) {}

  /** The autonomous tool context of this job. */
  toolContext(): ToolContext {
    const { job } = this;
    return {
      userId: job.owner,
      userName: job.ownerName,
      threadKey: `job:${job.id}`,
      channel: job.origin.channel,
      scope: job.origin.scope,
      // The workspace of the chat it was created in: a person's own from a DM, the group's from a group.
      conversation: { channel: job.origin.channel, chatId: job.origin.chatId, kind: job.origin.kind },
      approval: { kind: 'autonomous', allowed: new Set(job.tools), askOwner: this.control.askOwner, ...(job.standing ? { standing: job.standing } : {}) },
      signal: this.control.signal,
      log: this.services.log,
    };
  }

  isStopped(): boolean {
    return this.control.signal.aborted;
  }

  async checkSignals(): Promise<LoopSignal> {
    if (this.isStopped()) return { type: 'stop' };
    const messages = await this.control.takeMessages();
    if (!messages.length) return { type: 'continue' };
    return { type: 'inject', messages: messages.map((text) => ({ role: 'user', content: jobMessageText(this.job, text) })) };
  }

  async beforeLlmCall(ctx: LoopContext, iteration: number): Promise<LoopOutcome<JobApprovalNeed> | undefined> {
    if (!(await this.control.ownerAdmitted())) return { type: 'failure', reason: accessLost(this.job.ownerName) };
    ctx.tools = await this.currentTools();
    if (iteration >= this.job.maxIterations) ctx.forceText = true;
    ctx.messages[0] = { role: 'system', content: jobSystemPrompt(this.job, this.services.config.agent.name) };
    return undefined;
  }

  async callLlm(ctx: LoopContext): Promise<LlmResponse> {
    this.control.activity('thinking');
    const step = journalStep(this.job, { kind: 'model', status: 'started' });
    // The owner pays for their job: its calls are booked against their daily limit and count as their usage.
    const response = await meteredCall(
      this.services,
      this.services.models.providerFor(this.job.model),
      { messages: ctx.messages, ...(ctx.forceText || !ctx.tools.length ? {} : { tools: ctx.tools }), signal: this.control.signal },
      { userId: this.job.owner, thread: `job:${this.job.id}`, purpose: 'job_step', job: true },
    );
    finishStep(this.job, step, 'done');
    return response;
  }

  handleTextResponse(text: string, _response: LlmResponse, ctx: LoopContext): TextAction<JobApprovalNeed> {
    const signal = completionSignal(text);
    if (signal.kind === 'done') return { action: 'return', outcome: { type: 'response', text: signal.report } };
    if (signal.kind === 'failed') return { action: 'return', outcome: { type: 'failure', reason: signal.reason } };
    ctx.messages.push({ role: 'assistant', content: text }, { role: 'user', content: KEEP_GOING });
    return { action: 'continue' };
  }

  /** A loop guard acted on the job's run: told to whoever follows its thread (`job:<id>`). */
  onGuard(fired: GuardFired): void {
    this.services.events.emit('guard', { thread: `job:${this.job.id}`, ...fired });
  }

  async executeToolCalls(calls: ToolCall[], content: string, ctx: LoopContext): Promise<BatchOutcome<JobApprovalNeed>> {
    ctx.messages.push({ role: 'assistant', content: content || null, toolCalls: calls });
    const steps = new Map(calls.map((call) => [call.id, journalStep(this.job, { kind: 'tool', tool: call.name, callId: call.id, status: 'started' })]));
    // The last batch's audit records were written during the model call (a model call away, so no wait):
    // the journal never says a call is done before its record is written, and no call runs before them.
    const context = this.toolContext();
    await this.services.pipeline.audited(context.threadKey);
    // Journaled before any call runs: after a crash a started call is reported as interrupted, not run again.
    this.job.messages = ctx.messages.slice(1);
    await this.control.save();
    this.control.activity(`running ${calls.map((call) => `\`${call.name}\``).join(', ')}`);
    // A step does not wait for its audit records: they are written while the next model call runs.
    const results = await this.services.pipeline.runBatch(calls, context, { auditBehind: true });
    if (this.control.signal.aborted) {
      // Stopped mid-call (a restart, a timeout): the next run must not take the call for a plain failure.
      for (const result of results) {
        if (result.status !== 'ok') result.content = stoppedCallResult(this.control.signal.reason);
      }
    }
    // The pipeline reports each call's end (`tool.call`); the journal records it here.
    for (const result of results) finishStep(this.job, steps.get(result.call.id)!, result.status === 'ok' ? 'done' : 'failed');
    const { batch, waiting } = settleBatch(results, ctx);
    if (!waiting.length) return batch;
    return { ...batch, outcome: { type: 'need_approval', pending: { calls: waiting, reason: content } } };
  }

  /** The tools offered to the job's model now. */
  offeredTools(): Promise<ToolDefinition[]> {
    return this.currentTools();
  }

  /** Tools the owner could use in a DM, less those a job never runs. */
  private async currentTools(): Promise<ToolDefinition[]> {
    const { policy, permissions, pipeline, registry } = this.services;
    // A change made on another instance moves the revisions here before the model is shown the tools.
    await Promise.all([policy.refresh(), permissions.refresh()]);
    const revision = `${policy.revision()}:${permissions.revision()}:${registry.revision()}`;
    if (this.offered?.revision !== revision) {
      const dm = await pipeline.definitions({ userId: this.job.owner, scope: this.job.origin.scope, approval: { kind: 'chat', chatKind: 'dm' } });
      this.offered = { revision, tools: dm.filter((tool) => !DEFAULT_AUTONOMOUS_DENYLIST.has(tool.name)) };
    }
    return this.offered.tools;
  }
}

/** What the job's model is told after a reply that neither finishes nor calls a tool. */
export const KEEP_GOING = 'Continue with the job. When the goal is reached, reply with your final report beginning with "DONE:"; if it cannot be reached, begin with "FAILED:".';
