/**
 * Similar calls in a row (seed 002): the same tool with arguments that agree on
 * most of their keys. The model is told one call before the limit, once per run
 * of similar calls; at the limit it is a loop. A different call ends the run.
 */
import { argumentAgreement } from './call-similarity.js';
import { describeCall, type CallDetector, type LoopFinding, type SeenCall } from './observed-call.js';

/** Counts similar calls in a row; see the module comment. */
export class SimilarCallsDetector implements CallDetector {
  private last: SeenCall | undefined;
  private run = 0;

  /**
   * @param similarity share of argument keys that must agree (0.8: 4 of 5)
   * @param limit similar calls in a row that make a loop
   */
  constructor(
    private readonly similarity: number,
    private readonly limit: number,
  ) {}

  /** Counts the call into the run, or starts a new run with it. */
  see(seen: SeenCall): LoopFinding | undefined {
    this.run = this.last && this.similar(this.last, seen) ? this.run + 1 : 1;
    this.last = seen;
    // A warning at the first call would be noise: the earliest is at the second.
    const level = this.run >= this.limit ? 'limit' : this.run === this.limit - 1 && this.run >= 2 ? 'warn' : undefined;
    if (!level) return undefined;
    return { detector: 'similar', level, summary: `${describeCall(seen)}, ${this.run} times in a row with the same or nearly the same arguments.` };
  }

  /** Ends the run. */
  reset(): void {
    this.last = undefined;
    this.run = 0;
  }

  private similar(a: SeenCall, b: SeenCall): boolean {
    return a.call.name === b.call.name && (a.key === b.key || argumentAgreement(a.args, b.args) >= this.similarity);
  }
}
