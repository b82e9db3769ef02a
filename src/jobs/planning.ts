/**
 * Planning (seed 003): one model call turns a job's goal into a JSON plan of
 * tool calls, validated with zod; the steps then run without model calls, and
 * one completion-check call asks whether the goal is reached. A step that
 * fails or needs a person, or a message from the owner, abandons the plan:
 * the shared loop takes over with everything learnt so far.
 */
import { z } from 'zod';
import type { AgentServices } from '../engine/services.js';
import { meteredCall } from '../engine/metered-call.js';
import { readJsonAt } from '../llm/json-scan.js';
import type { ChatMessage, LlmResponse, ToolDefinition } from '../llm/types.js';
import type { ToolContext } from '../tools/types.js';
import { completionSignal, type CompletionSignal } from './completion.js';
import { JobDelegate, jobRequestMessage, jobSystemPrompt, type JobRunControl } from './delegate.js';
import { finishStep, journalStep, type JobRecord, type RunningJob } from './job.js';

/** Steps a plan may have. */
export const MAX_PLAN_STEPS = 20;

/** The plan the model must write. */
export const PlanSchema = z.object({
  steps: z
    .array(z.object({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}), why: z.string().max(300).optional() }))
    .min(1)
    .max(MAX_PLAN_STEPS),
});
export type Plan = z.infer<typeof PlanSchema>;

/** What the planning call asks for. */
export function planningPrompt(job: JobRecord, tools: readonly ToolDefinition[]): string {
  const list = tools.map((tool) => `- ${tool.name}: ${tool.description} Parameters: ${JSON.stringify(tool.parameters)}`).join('\n');
  return [
    `Plan the background job "${job.title}". Goal: ${job.goal}`,
    `Tools:\n${list || '(none)'}`,
    `Reply with JSON only, no prose: {"steps":[{"tool":"<name>","arguments":{...},"why":"<short reason>"}]} with 1 to ${MAX_PLAN_STEPS} steps, run in order without further thought.`,
  ].join('\n\n');
}

/** The plan in a model reply, or why it is not one. */
export function parsePlan(text: string, tools: readonly ToolDefinition[]): { ok: true; plan: Plan } | { ok: false; reason: string } {
  const start = text.indexOf('{');
  const json = start >= 0 ? readJsonAt(text, start) : undefined;
  if (!json) return { ok: false, reason: 'the reply held no JSON object' };
  const parsed = PlanSchema.safeParse(json.value);
  if (!parsed.success) return { ok: false, reason: `the plan did not match its shape: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  const known = new Set(tools.map((tool) => tool.name));
  const unknown = parsed.data.steps.find((step) => !known.has(step.tool));
  if (unknown) return { ok: false, reason: `the plan uses a tool it does not have: ${unknown.tool}` };
  return { ok: true, plan: parsed.data };
}

/** What running a plan came to. */
export type PlanRun =
  | { kind: 'done'; report: string }
  | { kind: 'failed'; reason: string }
  /** The loop takes over (plan abandoned, or complete with work left). */
  | { kind: 'loop'; why: string };

/** What running a plan needs from its worker. */
export interface PlanControl {
  services: AgentServices;
  tools: readonly ToolDefinition[];
  toolContext: ToolContext;
  signal: AbortSignal;
  /** One model call of the job (`purpose` names it in the events and metrics). */
  complete(messages: ChatMessage[], purpose: 'planning' | 'completion_check'): Promise<LlmResponse>;
  /** True when the owner sent a message: the plan is abandoned. */
  hasMessages(): Promise<boolean>;
  save(): Promise<void>;
  activity(what: string): void;
}

/**
 * Makes the plan (when the job has none yet), runs its remaining steps, then
 * checks completion. The job's conversation records every step, so the loop
 * can take over at any point, and a restart continues with the next step.
 */
export async function runPlan(job: RunningJob, control: PlanControl): Promise<PlanRun> {
  if (!job.planSteps) {
    control.activity('planning');
    const step = journalStep(job, { kind: 'plan', status: 'started' });
    const reply = await control.complete([
      { role: 'system', content: `You plan background jobs for ${job.ownerName}.` },
      { role: 'user', content: planningPrompt(job, control.tools) },
    ], 'planning');
    const parsed = parsePlan(reply.content, control.tools);
    finishStep(job, step, parsed.ok ? 'done' : 'failed');
    if (!parsed.ok) {
      job.planState = 'abandoned';
      if (!job.messages.length) job.messages.push({ role: 'user', content: jobRequestMessage(job) });
      await control.save();
      return { kind: 'loop', why: `no usable plan (${parsed.reason})` };
    }
    job.planSteps = parsed.plan.steps.map((planned) => ({ ...planned, status: 'pending' as const }));
    job.planState = 'running';
    // The request opens the conversation, so that the completion check (and the loop after it) knows the goal.
    if (!job.messages.length) job.messages.push({ role: 'user', content: jobRequestMessage(job) });
    job.messages.push({ role: 'assistant', content: `Plan: ${parsed.plan.steps.map((planned, i) => `${i + 1}. ${planned.tool}${planned.why ? ` (${planned.why})` : ''}`).join('; ')}` });
    await control.save();
  }
  for (const [index, planned] of job.planSteps.entries()) {
    if (planned.status !== 'pending') continue;
    if (control.signal.aborted) return { kind: 'loop', why: 'stopped' };
    if (await control.hasMessages()) return abandon(job, control, 'the owner sent a message');
    const callId = `plan_${job.id}_${index + 1}`;
    const call = { id: callId, name: planned.tool, arguments: JSON.stringify(planned.arguments) };
    job.messages.push({ role: 'assistant', content: null, toolCalls: [call] });
    const step = journalStep(job, { kind: 'tool', tool: call.name, callId, status: 'started' });
    await control.save();
    control.activity(`step ${index + 1} of ${job.planSteps.length}: \`${call.name}\``);
    const result = await control.services.pipeline.run(call, control.toolContext);
    const ok = result.status === 'ok';
    finishStep(job, step, ok ? 'done' : 'failed');
    planned.status = ok ? 'done' : 'failed';
    job.messages.push({ role: 'tool', toolCallId: callId, content: result.status === 'needs_approval' ? 'Not run: this step needs a person\'s approval; it is left to the next steps.' : result.content });
    await control.save();
    if (!ok) return abandon(job, control, `step ${index + 1} (${call.name}) ${result.status === 'needs_approval' ? 'needs approval' : 'failed'}`);
  }
  control.activity('checking the result');
  const check = journalStep(job, { kind: 'check', status: 'started' });
  job.messages.push({ role: 'user', content: COMPLETION_CHECK });
  // The reply comes cleaned of reasoning and tool markup (meteredCall): its answer is what is judged and kept.
  const answer = (await control.complete(job.messages, 'completion_check')).content.trim();
  finishStep(job, check, 'done');
  job.messages.push({ role: 'assistant', content: answer });
  job.planState = 'done';
  await control.save();
  const signal: CompletionSignal = completionSignal(answer);
  if (signal.kind === 'done') return { kind: 'done', report: signal.report };
  if (signal.kind === 'failed') return { kind: 'failed', reason: signal.reason };
  return { kind: 'loop', why: 'the plan ran but work remains' };
}

async function abandon(job: RunningJob, control: PlanControl, why: string): Promise<PlanRun> {
  job.planState = 'abandoned';
  job.messages.push({ role: 'user', content: `The plan was abandoned: ${why}. Continue toward the goal step by step.` });
  await control.save();
  return { kind: 'loop', why };
}

/** The completion check after a plan's steps. */
export const COMPLETION_CHECK = 'The planned steps have run (results above). Is the goal reached? If so, reply with the final report beginning with "DONE:". If not, say what remains, without "DONE:".';

/**
 * The planned path of a job's run, with its model calls made as the job's
 * (its system prompt, the owner's usage) and its tools as the job offers them.
 */
export async function runPlannedJob(job: RunningJob, services: AgentServices, control: JobRunControl, hasMessages: () => Promise<boolean>): Promise<PlanRun> {
  const delegate = new JobDelegate(job, services, control);
  const system: ChatMessage = { role: 'system', content: jobSystemPrompt(job, services.config.agent.name) };
  return runPlan(job, {
    services,
    tools: await delegate.offeredTools(),
    toolContext: delegate.toolContext(),
    signal: control.signal,
    // Planning and the completion check are the owner's calls too: booked against their limit, counted as theirs.
    complete: (messages, purpose) =>
      meteredCall(services, services.models.providerFor(job.model), { messages: messages[0]?.role === 'system' ? messages : [system, ...messages], signal: control.signal }, { userId: job.owner, thread: `job:${job.id}`, purpose, job: true }),
    hasMessages,
    save: () => control.save(),
    activity: (what) => control.activity(what),
  });
}
