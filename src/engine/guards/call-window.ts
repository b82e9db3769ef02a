/**
 * The same call again and again among other calls (seed 004's window): the same
 * tool with the same canonical arguments `repeats` times among the last `size`
 * calls is a loop, even when other calls come in between.
 */
import { describeCall, type CallDetector, type LoopFinding, type SeenCall } from './observed-call.js';

/** Keeps the keys of the last `size` calls; see the module comment. */
export class CallWindowDetector implements CallDetector {
  private keys: string[] = [];

  /**
   * @param size calls looked back over, this one included
   * @param repeats times the same call within them that make a loop
   */
  constructor(
    private readonly size: number,
    private readonly repeats: number,
  ) {}

  /** Adds the call to the window and counts its copies there. */
  see(seen: SeenCall): LoopFinding | undefined {
    this.keys.push(seen.key);
    if (this.keys.length > this.size) this.keys.shift();
    let times = 0;
    for (const key of this.keys) if (key === seen.key) times += 1;
    if (times < this.repeats) return undefined;
    return { detector: 'window', level: 'limit', summary: `${describeCall(seen)}, ${times} times within the last ${this.keys.length} calls.` };
  }

  /** Empties the window. */
  reset(): void {
    this.keys = [];
  }
}
