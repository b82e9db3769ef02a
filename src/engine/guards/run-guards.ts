/**
 * The loop's guards for one run: counters of nudges, truncations and repeated
 * batches, the loop detectors, and how a guard steps in (a warning in the
 * conversation, text forced, the run stopped), each reported as it fires.
 */
import type { ChatMessage } from '../../llm/types.js';
import type { GuardFired } from '../events.js';
import { LoopDetector, type LoopDetectorConfig } from './loop-detector.js';
import { RepeatedBatchTracker } from './repeated-batches.js';

/** What a guard changes of a run: its conversation, and whether tools are offered. */
interface GuardedRun {
  messages: ChatMessage[];
  forceText: boolean;
}

/** Per-run counters of the guards. */
export class Guards {
  nudgesInARow = 0;
  truncations = 0;
  answerReviewed = false;
  readonly failures = new RepeatedBatchTracker();
  readonly successes = new RepeatedBatchTracker();
  readonly answers = new RepeatedBatchTracker();
  readonly detector: LoopDetector | undefined;
  /** Text was forced by a guard (not by the delegate). */
  private forcedText = false;

  constructor(
    settings: { detectors?: LoopDetectorConfig },
    private readonly report: (fired: GuardFired) => void = () => undefined,
  ) {
    this.detector = settings.detectors ? new LoopDetector(settings.detectors) : undefined;
  }

  /** Tells the model, in a message of the conversation, that it repeats itself. */
  warn(ctx: GuardedRun, guard: string, message: string, summary?: string): void {
    ctx.messages.push({ role: 'user', content: message });
    this.report({ action: 'warning', guard, ...(summary ? { summary } : {}) });
  }

  /** Offers no tools until the model has answered in text. */
  forceText(ctx: GuardedRun, guard: string): void {
    if (!this.forcedText) this.report({ action: 'forced_answer', guard });
    this.forcedText = true;
    ctx.forceText = true;
  }

  /** The run ends because the model kept repeating itself. */
  stopped(guard: string, summary: string): void {
    this.report({ action: 'stopped', guard, summary });
  }

  /**
   * The model answered in text and the run goes on (a job): the tools come
   * back. Text a delegate forces stays forced (it sets it again before each call).
   */
  liftForcedText(ctx: GuardedRun): void {
    if (!this.forcedText) return;
    this.forcedText = false;
    ctx.forceText = false;
  }
}
