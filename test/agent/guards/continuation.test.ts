import { describe, expect, it } from 'vitest';
import { CONTINUE_PROMPT, stitch } from '../../../src/engine/guards/continuation.js';

describe('stitch', () => {
  it('joins pieces with no overlap as they are, mid-word or between words', () => {
    expect(stitch('The ans', 'wer is 42.')).toBe('The answer is 42.');
    expect(stitch('The answer', ' is 42.')).toBe('The answer is 42.');
    expect(stitch('The answer is:\n', '42.')).toBe('The answer is:\n42.');
  });

  it('drops a restarted sentence or line', () => {
    expect(stitch('First point.\nThe second point is that', 'The second point is that the cache is cold.')).toBe('First point.\nThe second point is that the cache is cold.');
    expect(stitch('The first part of the answer ends', 'answer ends here.')).toBe('The first part of the answer ends here.');
  });

  it('drops a restarted word', () => {
    expect(stitch('We plan the main', 'maintenance window for Sunday.')).toBe('We plan the maintenance window for Sunday.');
  });

  it('drops an overlap of a few hundred characters', () => {
    const sentences = Array.from({ length: 8 }, (_, i) => `Sentence ${i} explains one more detail of the setup.`).join(' ');
    const previous = `Intro.\n\n${sentences}`;
    expect(stitch(previous, `${sentences.slice(-300)} The end.`)).toBe(`${previous} The end.`);
  });

  it('drops a whole repeated paragraph', () => {
    const paragraph = 'Step two: open the settings page and choose the storage tab.';
    expect(stitch(`Step one: done.\n\n${paragraph}`, `${paragraph}\n\nStep three: press Save.`)).toBe(`Step one: done.\n\n${paragraph}\n\nStep three: press Save.`);
    const unfinished = 'Step two: open the settings page and choose the storage tab, then';
    expect(stitch(`Step one: done.\n\n${unfinished}`, `${unfinished} press Save.`)).toBe(`Step one: done.\n\n${unfinished} press Save.`);
  });

  it('tolerates whitespace differences at the seam and inside the overlap', () => {
    expect(stitch('We then restart the service.  ', '\nWe then restart the service. After that, check the logs.')).toBe(
      'We then restart the service. After that, check the logs.',
    );
    expect(stitch('Open the settings\npage and choose', 'Open the settings page and choose Storage.')).toBe('Open the settings\npage and choose Storage.');
  });

  it('does not take a chance match inside a word for an overlap', () => {
    expect(stitch('He said then', 'hen we left.')).toBe('He said thenhen we left.');
    expect(stitch('It is in the', 'the box.')).toBe('It is in thethe box.');
  });

  it('drops a code fence opened again inside a cut code block, and the repeated line after it', () => {
    expect(stitch('```ts\nconst a = 1;\n', '```ts\nconst b = 2;\n```')).toBe('```ts\nconst a = 1;\nconst b = 2;\n```');
    expect(stitch('```ts\nconst a = 1;\nconst b = ', '```ts\nconst b = 2;\n```\nDone.')).toBe('```ts\nconst a = 1;\nconst b = 2;\n```\nDone.');
    expect(stitch('~~~\nline one\n', '~~~\nline two\n~~~')).toBe('~~~\nline one\nline two\n~~~');
  });

  it('keeps a bare fence that closes the cut code block', () => {
    expect(stitch('```ts\nconst a = 1;\n', '```\n\nThat is the whole file.')).toBe('```ts\nconst a = 1;\n```\n\nThat is the whole file.');
  });

  it('keeps a fence that opens a new block after a closed one', () => {
    expect(stitch('```ts\nconst a = 1;\n```\n', '```sh\nnpm test\n```')).toBe('```ts\nconst a = 1;\n```\n```sh\nnpm test\n```');
  });

  it('keeps the other piece when one is empty', () => {
    expect(stitch('Whole.', '  ')).toBe('Whole.');
    expect(stitch('', 'Whole.')).toBe('Whole.');
  });

  it('stays fast on long, repetitive pieces', () => {
    const previous = 'ab '.repeat(20_000);
    expect(stitch(previous, 'ab ab c')).toBe(`${previous.trimEnd()} c`);
  });
});

describe('CONTINUE_PROMPT', () => {
  it('asks to go on where the reply stopped without repeating it', () => {
    expect(CONTINUE_PROMPT).toMatch(/continue exactly where it stopped/i);
    expect(CONTINUE_PROMPT).toMatch(/do not repeat/i);
  });
});
