/**
 * Counts how many times in a row the model has sent the same tool-call batch.
 * Two trackers use it: one for batches in which every call failed (IronClaw's
 * duplicate tracker) and one for identical batches that succeeded (a model stuck
 * re-reading the same thing). A third counts the same text answer given again
 * (see repeated-answers.ts).
 */
export class RepeatedBatchTracker {
  private last: string | undefined;
  private count = 0;

  /**
   * Records a batch. `counts` says whether this batch takes part in the streak
   * (e.g. "every call failed"); one that does not ends the streak.
   * @returns how many times in a row this fingerprint has now been seen (0 when it does not count)
   */
  record(fingerprint: string, counts: boolean): number {
    if (!counts) {
      this.reset();
      return 0;
    }
    this.count = fingerprint === this.last ? this.count + 1 : 1;
    this.last = fingerprint;
    return this.count;
  }

  /** Ends the streak (a text reply does this). */
  reset(): void {
    this.last = undefined;
    this.count = 0;
  }
}
