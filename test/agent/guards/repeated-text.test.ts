import { describe, expect, it } from 'vitest';
import { findDegenerateTail, REPETITION_CUT_NOTE } from '../../../src/engine/guards/repeated-text.js';

const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
const varied = (i: number) => `${words[i % 10]} ${words[(i * 3) % 10]} ${i}`;

describe('long legitimate answers are left whole', () => {
  const cases: Record<string, string> = {
    'a 200-row markdown table': ['| id | name | status |', '| --- | --- | --- |', ...Array.from({ length: 200 }, (_, i) => `| ${i} | item | ok |`)].join('\n'),
    'a table of identical rows': ['| a | b |', '| - | - |', ...Array.from({ length: 60 }, () => '| 0 | 0 |')].join('\n'),
    '500 CSV rows': ['id,name,score,status', ...Array.from({ length: 500 }, () => '0,none,0,ok')].join('\n'),
    '300 lines of code in a fence': ['```ts', ...Array.from({ length: 100 }, (_, i) => `function f${i}() {\n  return ${i};\n}`), '```'].join('\n'),
    'generated code with the same line 300 times': ['Here is the file:', '~~~js', 'const rows = [', ...Array.from({ length: 300 }, () => '  { id: 0, name: "none" },'), '];', '~~~'].join('\n'),
    'indented code with repeated lines': ['Example:', '', ...Array.from({ length: 200 }, () => '    print("hello world")')].join('\n'),
    'an essay whose paragraphs all start alike': Array.from({ length: 20 }, (_, i) => `As discussed above, the next point matters. ${varied(i)} follows from it, as discussed above.`).join('\n\n'),
    'a numbered list of 100 similar items': Array.from({ length: 100 }, (_, i) => `${i + 1}. Check the settings of the server.`).join('\n'),
    'a bullet list of identical items': Array.from({ length: 80 }, () => '- TODO: write the test for this case').join('\n'),
    'a phrase 10 times across paragraphs': Array.from({ length: 10 }, (_, i) => `Make sure to back up your data. ${varied(i)} is the step after that.`).join('\n\n'),
    'separator lines': `Summary\n${'-'.repeat(400)}\n${'='.repeat(400)}\n${'-=-'.repeat(200)}`,
    'a short repeat': `Thanks! Thanks! Thanks! Thanks! Thanks! Thanks! Thanks!`,
    'a long reply of distinct sentences': Array.from({ length: 3_000 }, (_, i) => `Sentence ${i} of a long answer.`).join(' '),
  };
  for (const [name, text] of Object.entries(cases)) {
    it(name, () => expect(findDegenerateTail(text)).toBeUndefined());
  }
});

describe('degenerate tails are found, keeping everything before the loop and one copy', () => {
  it('the same sentence 30 times at the end', () => {
    const found = findDegenerateTail(`Here is what I found.\n\n${'I will check the file again. '.repeat(30)}`);
    expect(found).toEqual({ keep: 'Here is what I found.\n\nI will check the file again.', unit: 'I will check the file again.', repeats: 30 });
  });

  it('the same word 200 times', () => {
    expect(findDegenerateTail(`The answer is ${'yes '.repeat(200)}`)).toMatchObject({ keep: 'The answer is yes', unit: 'yes', repeats: 200 });
  });

  it('a word the answer already used before it started looping', () => {
    const text = `Yes: I checked, and yes, the backup ran. So yes, it is ${'yes '.repeat(100)}`;
    expect(findDegenerateTail(text)?.keep).toBe('Yes: I checked, and yes, the backup ran. So yes, it is yes');
  });

  it('the same line 50 times', () => {
    const found = findDegenerateTail(`Starting.\n${'Processing the request...\n'.repeat(50)}`);
    expect(found).toMatchObject({ keep: 'Starting.\nProcessing the request...', repeats: 50 });
  });

  it('a line with commas repeated (prose, not CSV)', () => {
    const line = 'I will check the logs, the config, the cache, and the database.\n';
    expect(findDegenerateTail(`Plan:\n\n${line.repeat(40)}`)?.keep).toBe(`Plan:\n\n${line.trim()}`);
  });

  it('a two-line unit repeated', () => {
    const unit = 'Let me look at the logs.\nThe logs show nothing new.\n';
    const found = findDegenerateTail(`Intro line.\n${unit.repeat(20)}`);
    expect(found).toMatchObject({ keep: `Intro line.\n${unit.trim()}`, repeats: 20 });
  });

  it('a two-line unit cut mid-copy by the end of the stream', () => {
    const unit = 'Let me look at the logs.\nThe logs show nothing new.\n';
    expect(findDegenerateTail(`Intro line.\n${unit.repeat(20)}Let me lo`)?.keep).toBe(`Intro line.\n${unit.trim()}`);
  });

  it('a paragraph repeated with blank lines between the copies', () => {
    const paragraph = 'I am sorry, but I cannot find the file you mentioned. Could you check the name and send it again?';
    const found = findDegenerateTail(`Hello.\n\n${`${paragraph}\n\n`.repeat(12)}`);
    expect(found?.keep).toBe(`Hello.\n\n${paragraph}`);
    expect(found?.unit).toBe(paragraph);
  });

  it('a loop longer than the part searched keeps only the text before it', () => {
    const intro = 'Real content here. Some more real content.';
    expect(findDegenerateTail(`${intro}\n\n${'I keep going. '.repeat(8_000)}`)).toMatchObject({ keep: `${intro}\n\nI keep going.`, repeats: 8_000 });
  });

  it('prose after a table still counts when it loops', () => {
    const table = '| a | b |\n| - | - |\n| 1 | 2 |';
    expect(findDegenerateTail(`${table}\n\n${'Done. '.repeat(60)}`)?.keep).toBe(`${table}\n\nDone.`);
  });

  it('a loop followed by a closing code block is no degenerate tail', () => {
    const text = `${'Checking again. '.repeat(40)}\n\`\`\`\ncode\n\`\`\``;
    expect(findDegenerateTail(text)).toBeUndefined();
  });
});

describe('thresholds', () => {
  it('the copies must be back to back up to the end', () => {
    const text = `${'I will check the file again. '.repeat(30)}\n\nThat is all I can say about it for now, sorry.`;
    expect(findDegenerateTail(text)).toBeUndefined();
  });

  it('a few copies that fill most of a short reply are a loop, a few in a long reply are style', () => {
    const run = 'Point one matters a great deal here. '.repeat(8);
    expect(findDegenerateTail(`Summary.\n\n${run}`)?.repeats).toBe(8);
    const essay = Array.from({ length: 40 }, (_, i) => `Paragraph ${varied(i)} says something new.`).join('\n\n');
    expect(findDegenerateTail(`${essay}\n\n${run}`)).toBeUndefined();
  });

  it('honours the options given', () => {
    const text = `Intro. ${'Again and again. '.repeat(15)}`;
    expect(findDegenerateTail(text, { minRepeats: 20 })).toBeUndefined();
    expect(findDegenerateTail(text, { maxChunk: 10 })).toBeUndefined();
    expect(findDegenerateTail(text)?.repeats).toBe(15);
  });

  it('20 paragraphs that each end by repeating their own phrase a few times', () => {
    const text = Array.from({ length: 20 }, (_, i) => `Part ${i + 1} starts here. ` + `Point ${i + 1} matters. `.repeat(12)).join('\n\n');
    expect(findDegenerateTail(text)).toBeUndefined();
  });
});

describe('the note after a cut', () => {
  it('tells the reader that text was cut', () => {
    expect(REPETITION_CUT_NOTE).toMatch(/repeat/i);
    expect(REPETITION_CUT_NOTE).toMatch(/cut/);
  });
});
