/**
 * The agentic loop: one engine for every consumer (chat turns, background jobs).
 * The consumer-specific parts live in a {@link LoopDelegate}; the loop owns the
 * order of steps and the guards that keep a model from looping forever.
 */
import type { ChatMessage, LlmResponse, ToolCall, ToolDefinition } from '../llm/types.js';
import type { GuardFired } from './events.js';
import { CONTINUE_PROMPT, stitch } from './guards/continuation.js';
import { batchFingerprint } from './guards/fingerprint.js';
import { type LoopFinding, type LoopDetectorConfig, type ObservedCall } from './guards/loop-detector.js';
import { Guards } from './guards/run-guards.js';
import { REPEATED_ANSWER_NOTICE, REPEATED_FAILURE_NOTICE, REPEATED_SUCCESS_NOTICE, TRUNCATED_ANSWER_NOTE, TRUNCATED_CALLS_NOTICE } from './guards/notices.js';
import { answerKey, repeatedAnswerSummary } from './guards/repeated-answers.js';
import { findDegenerateTail, REPETITION_CUT_NOTE } from './guards/repeated-text.js';
import { signalsToolIntent, TOOL_INTENT_NUDGE } from './guards/tool-intent.js';
import { stripReasoning, stripToolMarkup } from '../llm/clean-output.js';
import { EMPTY_REPLY_FALLBACK, finalizeReply, type FinalizedReply } from './reasoning.js';

/** The answer when the model calls tools after being told to answer in text, and writes nothing else. */
export const FORCED_TEXT_FALLBACK = 'I could not finish this with the steps I am allowed to take. Tell me how to narrow it down and I will try again.';

/** The mutable state of one run of the loop, shared with the delegate. */
export interface LoopContext {
  /** The conversation sent to the model. */
  messages: ChatMessage[];
  /** Tools offered to the model; the delegate may refresh them before each call. */
  tools: ToolDefinition[];
  /** When set, no tools are offered: the model must answer in text. */
  forceText: boolean;
}

/** What `checkSignals` reports at the start of an iteration. */
export type LoopSignal =
  | { type: 'continue' }
  | { type: 'stop' }
  | { type: 'inject'; messages: ChatMessage[] };

/** How a run of the loop ended. `P` is the delegate's pending-approval record. */
export type LoopOutcome<P = unknown> =
  | { type: 'response'; text: string }
  | { type: 'stopped' }
  | { type: 'max_iterations' }
  | { type: 'need_approval'; pending: P }
  | { type: 'failure'; reason: string };

/** What a delegate does with a text reply. */
export type TextAction<P = unknown> = { action: 'return'; outcome: LoopOutcome<P> } | { action: 'continue' };

/** The result of executing one batch of tool calls. */
export interface BatchOutcome<P = unknown> {
  /** Ends the loop (e.g. an approval is needed). */
  outcome?: LoopOutcome<P>;
  /** Every call of the batch failed. */
  allFailed: boolean;
  /** Every call of the batch succeeded. */
  allSucceeded: boolean;
  /**
   * Each settled call, in order, with whether it succeeded: what the loop
   * detectors watch. Without it, every call counts as failed when the whole
   * batch failed and as succeeded otherwise.
   */
  calls?: ObservedCall[];
}

/**
 * The consumer-specific parts of the loop (IronClaw's `LoopDelegate`).
 * Only `callLlm`, `handleTextResponse` and `executeToolCalls` are required.
 */
export interface LoopDelegate<P = unknown> {
  /** External signals: stop, or user messages to inject. */
  checkSignals?(ctx: LoopContext): Promise<LoopSignal> | LoopSignal;
  /** Before each model call: refresh tools, add a nudge. An outcome ends the loop. (The daily cost limit is the metered call's: see metered-call.ts.) */
  beforeLlmCall?(ctx: LoopContext, iteration: number): Promise<LoopOutcome<P> | undefined> | LoopOutcome<P> | undefined;
  /**
   * Calls the model and returns its reply as it came: the loop cleans it. Throws
   * LlmError on failure. `continuing` is set when the call continues a text
   * reply cut by the output limit (its text follows the previous one's).
   */
  callLlm(ctx: LoopContext, iteration: number, continuing?: boolean): Promise<LlmResponse>;
  /**
   * Observes the cleaned reply before the loop acts on it: its tool calls include
   * those recovered from text, and `anomaly` says when a fallback sentence replaced it.
   */
  onReply?(reply: FinalizedReply, ctx: LoopContext): Promise<void> | void;
  /** A text reply that is not a nudged tool intent. */
  handleTextResponse(text: string, response: LlmResponse, ctx: LoopContext): Promise<TextAction<P>> | TextAction<P>;
  /**
   * Looks at a final text answer before it is handed over, once per run: a
   * returned message (e.g. "you said you wrote notes.md, but nothing wrote it")
   * goes to the model, which answers again.
   */
  reviewAnswer?(text: string, ctx: LoopContext): Promise<string | undefined> | string | undefined;
  /** Runs a batch of tool calls and appends the assistant message and the results to `ctx.messages`. */
  executeToolCalls(calls: ToolCall[], content: string, ctx: LoopContext): Promise<BatchOutcome<P>>;
  /**
   * The model kept repeating itself after it was told: the delegate decides
   * (ask the person, or stop and report). Without it the run ends in a failure
   * that names what repeated.
   */
  onLoopDetected?(finding: LoopFinding, calls: ToolCall[], ctx: LoopContext): Promise<LoopOutcome<P>> | LoopOutcome<P>;
  /** Observes a loop guard acting on the run: a note to the model, forced text, or a stop. */
  onGuard?(fired: GuardFired): void;
  /** Observes a tool-intent nudge. */
  onToolIntentNudge?(text: string, ctx: LoopContext): void;
  /** After every iteration that did not end the loop. */
  afterIteration?(iteration: number, ctx: LoopContext): Promise<void> | void;
  /** Whether the run was stopped; consulted when a step throws (an abort is a stop, not an error). */
  isStopped?(): boolean;
}

/** Limits and thresholds of the loop. */
export interface LoopConfig {
  maxIterations: number;
  /** Tool-intent nudges allowed in a row. */
  maxToolIntentNudges: number;
  /** Truncated tool-call replies (cumulative) before text is forced. */
  truncationsBeforeForceText: number;
  /** Identical all-failing batches in a row: warning at the first number, forced text at the second. */
  failedRepeatWarnAt: number;
  failedRepeatForceTextAt: number;
  /** Identical successful batches in a row: warning, then forced text. */
  successRepeatWarnAt: number;
  successRepeatForceTextAt: number;
  /** The same answer in a row, in a run that goes on after answers (a job): warning, then the run ends with a report. */
  answerRepeatWarnAt: number;
  answerRepeatStopAt: number;
  /** Continuations asked for a text reply cut by the output limit. */
  maxContinuations: number;
  /** Thresholds of the loop detectors (similar calls, windows, cycles, failures); unset: they are off. */
  detectors?: LoopDetectorConfig;
}

/** The loop's defaults (SPEC section 4). */
export const DEFAULT_LOOP_CONFIG = {
  maxIterations: 50,
  maxToolIntentNudges: 2,
  truncationsBeforeForceText: 3,
  failedRepeatWarnAt: 2,
  failedRepeatForceTextAt: 4,
  successRepeatWarnAt: 5,
  successRepeatForceTextAt: 6,
  answerRepeatWarnAt: 2,
  answerRepeatStopAt: 3,
  maxContinuations: 3,
} as const satisfies LoopConfig;

/**
 * Runs the loop until the delegate returns an outcome, the model is stopped, or
 * the iteration cap is reached. An LLM error that survived the provider's retries
 * propagates (unless the run was stopped, which turns it into `stopped`).
 */
export async function runAgenticLoop<P = unknown>(
  delegate: LoopDelegate<P>,
  ctx: LoopContext,
  config: Partial<LoopConfig> = {},
): Promise<LoopOutcome<P>> {
  const settings: LoopConfig = { ...DEFAULT_LOOP_CONFIG, ...config };
  const guards = new Guards(settings, (fired) => delegate.onGuard?.(fired));
  for (let iteration = 1; iteration <= settings.maxIterations; iteration++) {
    try {
      const outcome = await runIteration(delegate, ctx, settings, guards, iteration);
      if (outcome) return outcome;
    } catch (error) {
      if (delegate.isStopped?.()) return { type: 'stopped' };
      throw error;
    }
    await delegate.afterIteration?.(iteration, ctx);
  }
  return { type: 'max_iterations' };
}

async function runIteration<P>(
  delegate: LoopDelegate<P>,
  ctx: LoopContext,
  settings: LoopConfig,
  guards: Guards,
  iteration: number,
): Promise<LoopOutcome<P> | undefined> {
  const signal = (await delegate.checkSignals?.(ctx)) ?? { type: 'continue' };
  if (signal.type === 'stop') return { type: 'stopped' };
  if (signal.type === 'inject') {
    ctx.messages.push(...signal.messages);
    guards.answers.reset();
  }

  const early = await delegate.beforeLlmCall?.(ctx, iteration);
  if (early) return early;

  const reply = await callModel(delegate, ctx, iteration);
  let response = reply.response;
  if (delegate.isStopped?.()) return { type: 'stopped' };
  // A reply cut while it was looping is not worth continuing: the loop guard cuts it below.
  if (response.finishReason === 'length' && response.toolCalls.length === 0 && !findDegenerateTail(response.content)) {
    response = await continueCutText(delegate, ctx, settings, iteration, reply.raw);
    if (delegate.isStopped?.()) return { type: 'stopped' };
  }
  if (ctx.forceText && response.toolCalls.length) {
    // No tools were offered; calls made anyway are not run.
    response = { ...response, toolCalls: [], content: response.content.trim() || FORCED_TEXT_FALLBACK };
  }
  if (response.toolCalls.length === 0) return handleText(delegate, ctx, settings, guards, response);
  return handleToolCalls(delegate, ctx, settings, guards, response);
}

/**
 * Calls the model and cleans its reply, so that no consumer acts on raw output:
 * reasoning and stray tool tags go, calls written as text for an offered tool
 * become real calls, and an empty reply becomes the fallback sentence.
 */
async function callModel<P>(delegate: LoopDelegate<P>, ctx: LoopContext, iteration: number): Promise<{ response: LlmResponse; raw: LlmResponse }> {
  const raw = await delegate.callLlm(ctx, iteration);
  const offered = ctx.forceText ? [] : ctx.tools.map((tool) => tool.name);
  const reply = finalizeReply(raw, offered);
  await delegate.onReply?.(reply, ctx);
  return { response: reply.response, raw };
}

/**
 * Asks the model to go on with a text reply the output limit cut, up to
 * `maxContinuations` times, and stitches the pieces without repeating their
 * overlap. The pieces and the requests to continue leave the conversation
 * again: it keeps one whole answer. Still cut after that, the answer says so.
 */
async function continueCutText<P>(
  delegate: LoopDelegate<P>,
  ctx: LoopContext,
  settings: LoopConfig,
  iteration: number,
  first: LlmResponse,
): Promise<LlmResponse> {
  const mark = ctx.messages.length;
  const forceText = ctx.forceText;
  let response = first;
  // The pieces keep their edges: a cut can fall between two words or inside one.
  let text = cleanPiece(first.content).trimStart();
  // The continuation is text: tools stay unoffered until the answer is whole.
  ctx.forceText = true;
  try {
    for (let round = 0; round < settings.maxContinuations && response.finishReason === 'length'; round++) {
      ctx.messages.push({ role: 'assistant', content: cleanPiece(response.content) }, { role: 'user', content: CONTINUE_PROMPT });
      response = await delegate.callLlm(ctx, iteration, true);
      if (delegate.isStopped?.()) break;
      text = stitch(text, cleanPiece(response.content));
    }
  } finally {
    ctx.messages.splice(mark);
    ctx.forceText = forceText;
  }
  text = text.trim() || EMPTY_REPLY_FALLBACK;
  if (response.finishReason === 'length') text = `${text}\n\n${TRUNCATED_ANSWER_NOTE}`;
  return { ...response, content: text, toolCalls: [], finishReason: response.finishReason };
}

/** A piece of a reply without reasoning or tool markup, its edges kept. */
function cleanPiece(content: string): string {
  return stripToolMarkup(stripReasoning(content));
}

async function handleText<P>(
  delegate: LoopDelegate<P>,
  ctx: LoopContext,
  settings: LoopConfig,
  guards: Guards,
  response: LlmResponse,
): Promise<LoopOutcome<P> | undefined> {
  let text = response.content;
  const intent = signalsToolIntent(text);
  if (intent && ctx.tools.length > 0 && !ctx.forceText && guards.nudgesInARow < settings.maxToolIntentNudges) {
    guards.nudgesInARow += 1;
    delegate.onToolIntentNudge?.(text, ctx);
    ctx.messages.push({ role: 'assistant', content: text }, { role: 'user', content: TOOL_INTENT_NUDGE });
    return undefined;
  }
  // The text goes to the delegate: the streak of nudges is over either way.
  guards.nudgesInARow = 0;
  guards.failures.reset();
  guards.successes.reset();

  // A degenerate stream is cut where it starts repeating, and the person is told.
  const loop = findDegenerateTail(text);
  if (loop) text = `${loop.keep.trimEnd()}\n\n${REPETITION_CUT_NOTE}`;

  if (delegate.reviewAnswer && !guards.answerReviewed) {
    guards.answerReviewed = true;
    const correction = await delegate.reviewAnswer(text, ctx);
    if (correction) {
      ctx.messages.push({ role: 'assistant', content: text }, { role: 'user', content: correction });
      return undefined;
    }
  }
  const action = await delegate.handleTextResponse(text, { ...response, content: text }, ctx);
  if (action.action === 'return') return action.outcome;
  guards.liftForcedText(ctx);
  // The run goes on after this answer: the same one again and again is a loop of its own.
  const repeats = guards.answers.record(answerKey(text), true);
  if (repeats >= settings.answerRepeatStopAt) {
    const summary = repeatedAnswerSummary(text, repeats);
    guards.stopped('repeated_answer', summary);
    return { type: 'failure', reason: `I kept repeating myself: ${summary}` };
  }
  if (repeats >= settings.answerRepeatWarnAt) guards.warn(ctx, 'repeated_answer', REPEATED_ANSWER_NOTICE);
  return undefined;
}

async function handleToolCalls<P>(
  delegate: LoopDelegate<P>,
  ctx: LoopContext,
  settings: LoopConfig,
  guards: Guards,
  response: LlmResponse,
): Promise<LoopOutcome<P> | undefined> {
  if (response.finishReason === 'length') {
    // Arguments cut off mid-JSON may parse into something harmful: never run them.
    guards.truncations += 1;
    if (response.content.trim()) ctx.messages.push({ role: 'assistant', content: response.content });
    guards.warn(ctx, 'truncated_calls', TRUNCATED_CALLS_NOTICE);
    if (guards.truncations >= settings.truncationsBeforeForceText) guards.forceText(ctx, 'truncated_calls');
    return undefined;
  }
  guards.nudgesInARow = 0;
  guards.answers.reset();
  const fingerprint = batchFingerprint(response.toolCalls);
  const batch = await delegate.executeToolCalls(response.toolCalls, response.content, ctx);
  if (batch.outcome) return batch.outcome;

  const failedRepeats = guards.failures.record(fingerprint, batch.allFailed);
  const successRepeats = guards.successes.record(fingerprint, batch.allSucceeded);
  // The detectors see every call, so that they remember it if forced text does not end the repetition.
  const verdict = guards.detector?.observe(batch.calls ?? observedCalls(response.toolCalls, batch));
  if (failedRepeats >= 2) {
    // The same failing batch again is step 6's: its warning and forced text come before any question or stop.
    if (failedRepeats >= settings.failedRepeatWarnAt) guards.warn(ctx, 'repeated_failure', REPEATED_FAILURE_NOTICE);
    if (failedRepeats >= settings.failedRepeatForceTextAt) guards.forceText(ctx, 'repeated_failure');
    return undefined;
  }
  if (verdict?.action === 'escalate') {
    if (delegate.onLoopDetected) return delegate.onLoopDetected(verdict.finding, response.toolCalls, ctx);
    guards.stopped(verdict.finding.detector, verdict.finding.summary);
    return { type: 'failure', reason: `I kept repeating myself: ${verdict.finding.summary}` };
  }
  if (verdict?.action === 'note') {
    // One note per batch: the detector's says what repeats, and covers the streak of successes below.
    guards.warn(ctx, verdict.finding.detector, verdict.message, verdict.finding.summary);
    if (successRepeats >= settings.successRepeatForceTextAt) guards.forceText(ctx, 'repeated_success');
  } else if (successRepeats >= settings.successRepeatWarnAt) {
    guards.warn(ctx, 'repeated_success', REPEATED_SUCCESS_NOTICE);
    if (successRepeats >= settings.successRepeatForceTextAt) guards.forceText(ctx, 'repeated_success');
  }
  return undefined;
}

/** The calls of a batch as the detectors see them, when the delegate did not say call by call. */
function observedCalls(calls: readonly ToolCall[], batch: BatchOutcome<unknown>): ObservedCall[] {
  return calls.map((call) => ({ name: call.name, arguments: call.arguments, ok: !batch.allFailed }));
}
