/**
 * Cycles of calls (gemini-cli's repeating pattern): the last k calls equal the k
 * before them, for k from 2 up to a maximum, as in A,B,A,B or A,B,C,A,B,C. One
 * call repeated (A,A) is left to the similar-calls detector.
 */
import { describeCall, type CallDetector, type LoopFinding, type SeenCall } from './observed-call.js';

/** Keeps two cycles' worth of calls; see the module comment. */
export class CallCyclesDetector implements CallDetector {
  private calls: SeenCall[] = [];

  /** @param maxLength the longest cycle looked for */
  constructor(private readonly maxLength: number) {}

  /** Adds the call and looks for the shortest cycle that ends with it. */
  see(seen: SeenCall): LoopFinding | undefined {
    this.calls.push(seen);
    if (this.calls.length > 2 * this.maxLength) this.calls.shift();
    for (let k = 2; k <= this.maxLength && 2 * k <= this.calls.length; k++) {
      if (this.repeatsWithLength(k)) return { detector: 'cycle', level: 'limit', summary: cycleSummary(this.calls.slice(-k)) };
    }
    return undefined;
  }

  /** Forgets the calls. */
  reset(): void {
    this.calls = [];
  }

  /** The last k calls equal the k before them, and are not all one call. */
  private repeatsWithLength(k: number): boolean {
    const end = this.calls.length;
    let mixed = false;
    for (let i = 1; i <= k; i++) {
      const key = this.calls[end - i]!.key;
      if (key !== this.calls[end - k - i]!.key) return false;
      if (key !== this.calls[end - 1]!.key) mixed = true;
    }
    return mixed;
  }
}

/** `the cycle files_list → files_read, twice in a row`; arguments shown when a tool comes twice in it. */
function cycleSummary(cycle: readonly SeenCall[]): string {
  const names = cycle.map((seen) => seen.call.name);
  const steps = new Set(names).size === names.length ? names : cycle.map((seen) => describeCall(seen, 1));
  return `the cycle ${steps.join(' → ')}, twice in a row.`;
}
