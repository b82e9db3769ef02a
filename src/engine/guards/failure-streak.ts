/**
 * Failing calls in a row (seed 004's error tracker), whatever the calls are: a
 * model that keeps failing is stuck even when it varies its attempts. A call
 * that succeeds ends the streak.
 */
import { clip, type CallDetector, type LoopFinding, type SeenCall } from './observed-call.js';

/** Counts failing calls in a row; see the module comment. */
export class FailureStreakDetector implements CallDetector {
  private failures = 0;

  /** @param limit failing calls in a row that make a loop */
  constructor(private readonly limit: number) {}

  /** Counts a failure, or ends the streak on a success. */
  see({ call }: SeenCall): LoopFinding | undefined {
    this.failures = call.ok ? 0 : this.failures + 1;
    if (this.failures < this.limit) return undefined;
    const last = call.error ? `${call.name}: ${clip(call.error, 80)}` : call.name;
    return { detector: 'failures', level: 'limit', summary: `${this.failures} failing tool calls in a row (last: ${last}).` };
  }

  /** Ends the streak. */
  reset(): void {
    this.failures = 0;
  }
}
