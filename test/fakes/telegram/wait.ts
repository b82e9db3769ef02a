/**
 * Waiting in tests for something the bot does asynchronously, with a bound so
 * that a missing reply fails the test instead of hanging it.
 */

/** Resolves with the first truthy value of `check`, polling every 10 ms; throws after `timeoutMs`. */
export async function waitFor<T>(check: () => T | undefined | null | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
