import { describe, expect, it } from 'vitest';
import { markdownToMrkdwn } from '../../../src/channels/slack/render.js';

describe('markdownToMrkdwn', () => {
  it('escapes &, < and > in text so Slack shows them instead of parsing them', () => {
    expect(markdownToMrkdwn('a < b && c > d, <!channel>')).toBe('a &lt; b &amp;&amp; c &gt; d, &lt;!channel&gt;');
  });

  it('turns markdown emphasis into Slack markers', () => {
    expect(markdownToMrkdwn('**bold**, *italic*, _also italic_, ~~struck~~')).toBe('*bold*, _italic_, _also italic_, ~struck~');
  });

  it('does not repeat a marker for nested formatting of the same kind', () => {
    expect(markdownToMrkdwn('**outer **inner** text**')).toBe('*outer inner text*');
    expect(markdownToMrkdwn('***both***')).toBe('_*both*_');
  });

  it('keeps inline code and code blocks, escaped, without the language tag', () => {
    expect(markdownToMrkdwn('run `a<b>&c` now')).toBe('run `a&lt;b&gt;&amp;c` now');
    expect(markdownToMrkdwn('```ts\nif (a < b) { x **not bold** }\n```')).toBe('```\nif (a &lt; b) { x **not bold** }\n```');
  });

  it('writes links as <url|text>, bare URLs as <url>, and refuses other schemes', () => {
    expect(markdownToMrkdwn('[the docs](https://example.com/a?b=1&c=2)')).toBe('<https://example.com/a?b=1&amp;c=2|the docs>');
    expect(markdownToMrkdwn('see https://example.com')).toBe('see <https://example.com>');
    expect(markdownToMrkdwn('[click](javascript:alert(1))')).toBe('click');
    expect(markdownToMrkdwn('[a|b>c](https://x.org/p|q)')).toBe('<https://x.org/p%7Cq|a|b&gt;c>');
    expect(markdownToMrkdwn('mail me@example.com')).toBe('mail <mailto:me@example.com|me@example.com>');
  });

  it('resolves reference links', () => {
    expect(markdownToMrkdwn('read [the spec][s]\n\n[s]: https://spec.example')).toBe('read <https://spec.example|the spec>');
  });

  it('renders headings as bold lines', () => {
    expect(markdownToMrkdwn('# Plan **now**\n\nstep')).toBe('*Plan now*\n\nstep');
  });

  it('renders lists with bullets, numbers, nesting and task boxes', () => {
    expect(markdownToMrkdwn('- a\n- b\n  - c\n\n3. x\n4. y')).toBe('• a\n• b\n    ◦ c\n\n3. x\n4. y');
    expect(markdownToMrkdwn('- [x] done\n- [ ] todo')).toBe('• ☑ done\n• ☐ todo');
  });

  it('renders block quotes line by line', () => {
    expect(markdownToMrkdwn('> first **b**\n> second')).toBe('> first *b*\n> second');
  });

  it('renders tables as aligned code blocks', () => {
    expect(markdownToMrkdwn('| name | n |\n|---|---|\n| a | 10 |')).toBe('```\nname | n\n-----+---\na    | 10\n```');
  });

  it('shows raw HTML as text', () => {
    expect(markdownToMrkdwn('<b>hi</b>')).toBe('&lt;b&gt;hi&lt;/b&gt;');
  });
});
