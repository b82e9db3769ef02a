import { describe, expect, it } from 'vitest';
import { stitch } from '../../../src/agent/guards/continuation.js';

describe('stitch', () => {
  it('joins pieces with no overlap as they are, mid-word or between words', () => {
    expect(stitch('The ans', 'wer is 42.')).toBe('The answer is 42.');
    expect(stitch('The answer', ' is 42.')).toBe('The answer is 42.');
  });

  it('drops a restarted sentence or line', () => {
    expect(stitch('First point.\nThe second point is that', 'The second point is that the cache is cold.')).toBe('First point.\nThe second point is that the cache is cold.');
    expect(stitch('The first part of the answer ends', 'answer ends here.')).toBe('The first part of the answer ends here.');
  });

  it('drops a whole repeated paragraph', () => {
    const paragraph = 'Step two: open the settings page and choose the storage tab, then';
    expect(stitch(`Step one: done.\n\n${paragraph}`, `${paragraph} press Save.`)).toBe(`Step one: done.\n\n${paragraph} press Save.`);
  });

  it('tolerates whitespace differences at the seam', () => {
    expect(stitch('We then restart the service.  ', '\nWe then restart the service. After that, check the logs.')).toBe(
      'We then restart the service. After that, check the logs.',
    );
  });

  it('does not take a chance match inside a word for an overlap', () => {
    expect(stitch('He said then', 'hen we left.')).toBe('He said thenhen we left.');
  });

  it('drops a code fence opened again inside a cut code block', () => {
    expect(stitch('```ts\nconst a = 1;\n', '```ts\nconst b = 2;\n```')).toBe('```ts\nconst a = 1;\nconst b = 2;\n```');
  });

  it('keeps the previous text when the continuation is empty', () => {
    expect(stitch('Whole.', '  ')).toBe('Whole.');
  });
});
