/**
 * The loop detectors of seeds 002 and 004 behind one object: similar calls,
 * the same call again within a window, cycles, and failures in a row, each in
 * its own file. The loop shows it each batch of calls; it answers with the
 * reaction the ladder calls for: nothing, a note to the model, or escalation
 * (ask the person, or stop).
 *
 * Every detector keeps a bounded history (the window, two cycles' worth of
 * calls, or a counter), so the cost of a batch does not grow with the length of
 * the conversation.
 */
import { CallCyclesDetector } from './call-cycles.js';
import { CallWindowDetector } from './call-window.js';
import { FailureStreakDetector } from './failure-streak.js';
import { seeCall, type CallDetector, type LoopFinding, type ObservedCall } from './observed-call.js';
import { SimilarCallsDetector } from './similar-calls.js';

export type { LoopFinding, ObservedCall } from './observed-call.js';

/** Thresholds of the detectors (config `agent.loopGuards`). */
export interface LoopDetectorConfig {
  /** Share of argument keys that must agree for two calls of a tool to be similar. */
  similarity: number;
  /** Similar calls in a row that make a loop; the model is told at one fewer. */
  similarCallLimit: number;
  /** Calls looked back over for the same call again. */
  windowSize: number;
  /** The same call this many times within the window makes a loop. */
  windowRepeats: number;
  /** The longest cycle looked for (the last k calls equal to the k before them, k from 2). */
  maxCycleLength: number;
  /** Failing calls in a row that make a loop. */
  consecutiveFailures: number;
}

/** What the loop should do after a batch. */
export type LoopVerdict =
  | { action: 'none' }
  | { action: 'note'; finding: LoopFinding; message: string }
  | { action: 'escalate'; finding: LoopFinding };

const NONE: LoopVerdict = { action: 'none' };

/**
 * Watches the calls of one run of the loop; see the module comment. The ladder:
 * a warning is a note (once per run of similar calls); the first loop found is
 * a note saying what repeats; a loop found after that note is escalated.
 */
export class LoopDetector {
  /** In the order their findings win when one call trips several. */
  private readonly detectors: CallDetector[];
  private noted = false;

  constructor(config: LoopDetectorConfig) {
    this.detectors = [
      new FailureStreakDetector(config.consecutiveFailures),
      new SimilarCallsDetector(config.similarity, config.similarCallLimit),
      new CallCyclesDetector(config.maxCycleLength),
      new CallWindowDetector(config.windowSize, config.windowRepeats),
    ];
  }

  /** Records one batch (calls in order) and says what to do. */
  observe(calls: readonly ObservedCall[]): LoopVerdict {
    let worst: LoopFinding | undefined;
    for (const call of calls) {
      const seen = seeCall(call);
      for (const detector of this.detectors) {
        const finding = detector.see(seen);
        if (finding && (!worst || (finding.level === 'limit' && worst.level === 'warn'))) worst = finding;
      }
    }
    if (!worst) return NONE;
    if (worst.level === 'warn') return this.noted ? NONE : { action: 'note', finding: worst, message: loopNote(worst) };
    if (this.noted) return { action: 'escalate', finding: worst };
    this.noted = true;
    return { action: 'note', finding: worst, message: loopNote(worst) };
  }

  /**
   * Forgets every call and the note given (after the person chose Continue or
   * Try another way). A text reply does not reset it: a model that talks
   * between the same calls is still going in circles.
   */
  reset(): void {
    for (const detector of this.detectors) detector.reset();
    this.noted = false;
  }
}

/** The note to the model when a detector fires. */
export function loopNote(finding: LoopFinding): string {
  const lead = finding.level === 'warn' ? 'You are starting to repeat yourself' : 'You are going in circles';
  return `${lead}: ${finding.summary} Repeating it will not give a different result. Use what you already have, change your approach, or tell the user what is blocking you.`;
}
