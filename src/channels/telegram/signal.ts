/**
 * Bridges standard AbortSignals into grammY's API calls. grammY's typings name
 * the `abort-controller` polyfill's signal, which a standard signal satisfies
 * at run time (grammY only listens for its abort event) but not on paper.
 */
import type { Api } from 'grammy';

/** grammY's AbortSignal type. */
export type GrammySignal = NonNullable<Parameters<Api['getUpdates']>[1]>;

/** A standard AbortSignal typed as grammY expects. */
export function grammySignal(signal: AbortSignal): GrammySignal {
  return signal as unknown as GrammySignal;
}
