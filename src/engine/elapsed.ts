/** Elapsed time in the words a person reads, for status lines of turns and jobs. */

/**
 * Seconds as people say them.
 * @example formatElapsed(75) // '1 min 15 s'
 */
export function formatElapsed(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest ? `${minutes} min ${rest} s` : `${minutes} min`;
}
