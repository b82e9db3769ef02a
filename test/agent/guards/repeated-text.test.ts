import { describe, expect, it } from 'vitest';
import { findDegenerateTail } from '../../../src/agent/guards/repeated-text.js';

const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
const varied = (i: number) => `${words[i % 10]} ${words[(i * 3) % 10]} ${i}`;

describe('long legitimate answers are left whole', () => {
  const cases: Record<string, string> = {
    'a 200-row markdown table': ['| id | name | status |', '| --- | --- | --- |', ...Array.from({ length: 200 }, (_, i) => `| ${i} | item | ok |`)].join('\n'),
    'a table of identical rows': ['| a | b |', '| - | - |', ...Array.from({ length: 60 }, () => '| 0 | 0 |')].join('\n'),
    '500 CSV rows': ['id,name,score,status', ...Array.from({ length: 500 }, () => '0,none,0,ok')].join('\n'),
    '300 lines of code in a fence': ['```ts', ...Array.from({ length: 100 }, (_, i) => `function f${i}() {\n  return ${i};\n}`), '```'].join('\n'),
    'paragraphs that all start alike': Array.from({ length: 20 }, (_, i) => `As discussed above, the next point matters. ${varied(i)} follows from it, as discussed above.`).join('\n\n'),
    'a numbered list of 100 similar items': Array.from({ length: 100 }, (_, i) => `${i + 1}. Check the settings of the server.`).join('\n'),
    'a bullet list of identical items': Array.from({ length: 80 }, () => '- TODO: write the test for this case').join('\n'),
    'a phrase spread across paragraphs': Array.from({ length: 10 }, (_, i) => `Make sure to back up your data. ${varied(i)} is the step after that.`).join('\n\n'),
    'a separator line': `Summary\n${'-'.repeat(400)}\n${'='.repeat(400)}`,
    'a short repeat': `Thanks! Thanks! Thanks! Thanks! Thanks!`,
  };
  for (const [name, text] of Object.entries(cases)) {
    it(name, () => expect(findDegenerateTail(text)).toBeUndefined());
  }
});

describe('degenerate tails are found', () => {
  it('the same sentence 30 times at the end', () => {
    const found = findDegenerateTail(`Here is what I found.\n\n${'I will check the file again. '.repeat(30)}`);
    expect(found).toMatchObject({ keep: 'Here is what I found.\n\nI will check the file again.', repeats: 30 });
  });

  it('the same word 200 times', () => {
    expect(findDegenerateTail(`The answer is ${'yes '.repeat(200)}`)).toMatchObject({ keep: 'The answer is yes', unit: 'yes' });
  });

  it('the same line 50 times', () => {
    const found = findDegenerateTail(`Starting.\n${'Processing the request...\n'.repeat(50)}`);
    expect(found?.keep).toBe('Starting.\nProcessing the request...');
  });

  it('a two-line unit repeated, cut mid-copy by the stream', () => {
    const unit = 'Let me look at the logs.\nThe logs show nothing new.\n';
    const found = findDegenerateTail(`Intro line.\n${unit.repeat(20)}Let me lo`);
    expect(found?.keep).toBe('Intro line.\nLet me look at the logs.\nThe logs show nothing new.');
  });

  it('prose after a table still counts when it loops', () => {
    const table = '| a | b |\n| - | - |\n| 1 | 2 |';
    expect(findDegenerateTail(`${table}\n\n${'Done. '.repeat(60)}`)?.keep).toBe(`${table}\n\nDone.`);
  });

  it('stays bounded on a long reply', () => {
    const long = Array.from({ length: 2_000 }, (_, i) => `Sentence ${i} of a long answer.`).join(' ');
    expect(findDegenerateTail(long)).toBeUndefined();
  });
});

describe('style, not a loop', () => {
  it('20 paragraphs that each end by repeating their own phrase a few times', () => {
    const text = Array.from({ length: 20 }, (_, i) => `Part ${i + 1} starts here. ` + `Point ${i + 1} matters. `.repeat(12)).join('\n\n');
    expect(findDegenerateTail(text)).toBeUndefined();
  });

  it('a final run of a sentence the text already used many times', () => {
    const text = Array.from({ length: 20 }, (_, i) => `Part ${i + 1}. ` + 'As noted before, this matters. '.repeat(14)).join('\n\n');
    expect(findDegenerateTail(text)).toBeUndefined();
  });
});
