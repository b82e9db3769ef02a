/**
 * A last step before a call's request leaves for Telegram: after the pacing
 * wait, inside every retry, right before the HTTP request. A post is put on
 * record as pending here (sent-trail.ts) rather than before it queues for its
 * chat's one-message-a-second slot: a process killed during that wait (most of
 * a paced post's time) leaves no pending post, so its successor sends the
 * part at once instead of searching the chat for it.
 *
 * The step travels with the call's options under a symbol key, which grammY
 * passes to the transformers and leaves out of the JSON it sends.
 */
import type { Transformer } from 'grammy';

/** The options key of a call's last step before its request: a function returning a promise, awaited before the request. */
export const BEFORE_REQUEST: unique symbol = Symbol('pincer.telegram.beforeRequest');

/** Options carrying a step to run right before the request. */
export interface BeforeRequest {
  [BEFORE_REQUEST]?: () => Promise<void>;
}

/**
 * Runs the call's {@link BEFORE_REQUEST} step, if it has one, right before its
 * request; installed innermost, so after pacing. A call already aborted skips
 * the step: its request will not leave either.
 */
export function beforeRequest(): Transformer {
  return async (prev, method, payload, signal) => {
    const step = payload && typeof payload === 'object' ? (payload as BeforeRequest)[BEFORE_REQUEST] : undefined;
    if (step && !(signal as AbortSignal | undefined)?.aborted) await step();
    return prev(method, payload, signal);
  };
}
