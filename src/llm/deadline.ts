/**
 * The AbortSignal of one attempt: it fires when the caller aborts or when the
 * attempt's time is up, and remembers which of the two happened so the error
 * can say so. The SDK's own timeout stops at the response headers; this one
 * also covers reading a long stream.
 */

/** One attempt's signal and why it fired. */
export interface AttemptDeadline {
  readonly signal: AbortSignal;
  /** The caller's signal fired. */
  readonly aborted: boolean;
  /** The attempt ran out of time. */
  readonly timedOut: boolean;
  /** Stops the timer and detaches from the caller's signal; call when the attempt ends. */
  dispose(): void;
}

/** Starts the clock of one attempt of at most `timeoutMs`. */
export function startDeadline(timeoutMs: number, parent?: AbortSignal): AttemptDeadline {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`attempt timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    get aborted() {
      return parent?.aborted === true;
    },
    get timedOut() {
      return timedOut && parent?.aborted !== true;
    },
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
