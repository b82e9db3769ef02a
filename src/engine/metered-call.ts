/**
 * One metered model call, the only way the agent calls a model on someone's
 * behalf (chat replies, compaction, job steps, planning, completion checks):
 * the call's estimated cost is booked against its person's daily limit first
 * (refused with {@link UsageLimitError} when there is no room), the call is
 * made, its usage recorded and the booking settled with the real cost (or
 * released when the call failed), a `model.request` event reports it, and the
 * reply comes back cleaned: no consumer (the loop, planning, the completion
 * check, compaction) reads a model's reasoning or tool markup as its answer.
 */
import { LlmError, UsageLimitError } from '../errors.js';
import { estimateCost } from '../llm/pricing.js';
import { imagesSent, type LlmProvider, type LlmRequest, type LlmResponse } from '../llm/types.js';
import type { CostBooking } from './budget.js';
import type { AgentEventMap } from './events.js';
import { cleanResponse } from './reasoning.js';
import type { AgentServices } from './services.js';

/** What a model call is for, as the `model.request` event and the metrics name it. */
export type ModelPurpose = AgentEventMap['model.request']['purpose'];

/** Who a model call counts toward, and what it serves. */
export interface CallMeter {
  /** Qualified id of the person whose usage and daily limit the call counts toward. */
  userId: string;
  /** The thread the call serves (`job:<id>` for a job). */
  thread: string;
  purpose: ModelPurpose;
  /** A background job's call: also counted apart in the ledger. */
  job?: boolean;
}

/** The services a metered call uses. */
export type MeterServices = Pick<AgentServices, 'config' | 'models' | 'usage' | 'budget' | 'events' | 'log'>;

/**
 * Makes one model call for `meter.userId`, booked against their daily limit,
 * and returns its reply cleaned as {@link cleanResponse} does (calls written as
 * text count for the tools `request` offered).
 *
 * @throws UsageLimitError when the limit leaves no room for the call (no request is sent)
 * @throws whatever the provider throws (LlmError), after the booking is released
 */
export async function meteredCall(services: MeterServices, provider: LlmProvider, request: LlmRequest, meter: CallMeter): Promise<LlmResponse> {
  const booking = await book(services, provider, request, meter);
  const started = Date.now();
  const base = { thread: meter.thread, model: provider.model, purpose: meter.purpose };
  let response: LlmResponse;
  try {
    response = await provider.complete(request);
  } catch (error) {
    services.events.emit('model.request', { ...base, durationMs: Date.now() - started, inputTokens: 0, outputTokens: 0, error: error instanceof LlmError ? error.kind : 'other' });
    if (booking) await services.budget.release(booking).catch((cause: unknown) => services.log.warn({ err: cause, thread: meter.thread }, 'a failed model call\'s cost booking was not released; it lapses on its own'));
    throw error;
  }
  try {
    // In the ledger before the booking ends: a check in between sees the cost at least once.
    const images = request.messages.reduce((sum, message) => sum + imagesSent(message), 0);
    await services.usage.record(meter.userId, response, { job: Boolean(meter.job), ...(images ? { images } : {}) });
  } finally {
    if (booking) await services.budget.settle(booking, response.costUsd).catch((cause: unknown) => services.log.warn({ err: cause, thread: meter.thread }, 'a model call\'s cost booking was not settled; it lapses on its own'));
  }
  services.events.emit('model.request', { ...base, durationMs: Date.now() - started, inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens, costUsd: response.costUsd });
  return cleanResponse(response, request.tools?.map((tool) => tool.name) ?? []);
}

/** `provider` with every call metered for `meter` (for code that takes a provider, such as compaction). */
export function meteredProvider(services: MeterServices, provider: LlmProvider, meter: CallMeter): LlmProvider {
  return { model: provider.model, complete: (request) => meteredCall(services, provider, request, meter) };
}

/** Books the call's estimated cost when a daily limit is set; undefined without one. */
async function book(services: MeterServices, provider: LlmProvider, request: LlmRequest, meter: CallMeter): Promise<CostBooking | undefined> {
  const { config } = services;
  const limit = config.agent.dailyCostLimitUsd;
  if (limit <= 0) return undefined;
  const estimate = estimateCost(services.models.priceOf(provider.model), request, config.llm.maxTokens);
  const booking = await services.budget.book(meter.userId, estimate);
  if (booking) return booking;
  services.log.info({ user: meter.userId, thread: meter.thread, purpose: meter.purpose }, 'model call refused: the daily cost limit is reached or booked by running calls');
  throw new UsageLimitError(meter.userId, limit);
}
