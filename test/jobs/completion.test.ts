import { describe, expect, it } from 'vitest';
import { completionSignal } from '../../src/jobs/completion.js';

describe('completion detection', () => {
  it.each([
    ['DONE: all three pages summarised.', 'all three pages summarised.'],
    ['**DONE**: the report is in notes.md', 'the report is in notes.md'],
    ['The task is complete: every link was checked.', 'The task is complete: every link was checked.'],
    ['I have finished the task. The totals are 3 and 4.', 'I have finished the task. The totals are 3 and 4.'],
  ])('takes %j for done', (text, report) => {
    expect(completionSignal(text)).toEqual({ kind: 'done', report });
  });

  it.each([
    'The task is not done yet: I still need to check the second half.',
    'Not done yet.',
    'I will say the task is complete once I have checked the links.',
    'The job is almost done; next, I will fetch the last page.',
    'Before the task is complete I need the totals.',
    'Let me continue with the second file.',
    'I found three pages so far.',
  ])('does not take %j for done', (text) => {
    expect(completionSignal(text)).toEqual({ kind: 'continue' });
  });

  it('reads FAILED: as a failure with its reason', () => {
    expect(completionSignal('FAILED: the site refuses every request.')).toEqual({ kind: 'failed', reason: 'the site refuses every request.' });
  });
});
