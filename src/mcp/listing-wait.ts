/**
 * Waiting, when a call's result arrives, for the tool listing its server
 * started meanwhile (a `tools/list_changed` sent during or before the result),
 * so that the model's next request offers the new list (SPEC section 14).
 * The wait is bounded by what is left of the call's time limit and ended by
 * /stop; a listing that fails or outlasts it never fails the call.
 */

/** How a wait for a listing ended. */
export type ListingWait = 'listed' | 'failed' | 'timed out' | 'stopped';

/**
 * Waits for `listing` at most `ms` milliseconds, or until `signal` aborts.
 * Never rejects: a failed listing is reported as `failed` (its own handler
 * records why).
 */
export async function waitForListing(listing: Promise<void>, ms: number, signal: AbortSignal): Promise<ListingWait> {
  if (signal.aborted) return 'stopped';
  if (ms <= 0) return 'timed out';
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const ended = new Promise<ListingWait>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), ms);
    onAbort = () => resolve('stopped');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const listed = listing.then(
    (): ListingWait => 'listed',
    (): ListingWait => 'failed',
  );
  try {
    return await Promise.race([listed, ended]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort!);
  }
}
