import { describe, expect, it } from 'vitest';
import { markdownToTelegramHtml } from '../../../src/channels/telegram/render.js';
import { parseTelegramHtml } from '../../fakes/telegram/index.js';

/** Renders and checks the HTML is valid for Telegram; returns it. */
function render(markdown: string): string {
  const html = markdownToTelegramHtml(markdown);
  const parsed = parseTelegramHtml(html);
  if (!parsed.ok) throw new Error(`${parsed.error}\n${html}`);
  return html;
}

describe('markdownToTelegramHtml', () => {
  it('escapes &, < and > in text', () => {
    expect(render('Tom & Jerry <3 a>b')).toBe('Tom &amp; Jerry &lt;3 a&gt;b');
  });

  it('escapes inside inline code and code blocks, which keep their content verbatim', () => {
    expect(render('use `a<b && c>d`')).toBe('use <code>a&lt;b &amp;&amp; c&gt;d</code>');
    expect(render('```\nif (a < b && c > d) {}\n```')).toBe('<pre>if (a &lt; b &amp;&amp; c &gt; d) {}</pre>');
  });

  it('leaves markdown inside code alone', () => {
    expect(render('```\n**not bold** _x_\n```')).toBe('<pre>**not bold** _x_</pre>');
  });

  it('marks fenced code with its language', () => {
    expect(render('```typescript\nconst x = 1;\n```')).toBe('<pre><code class="language-typescript">const x = 1;</code></pre>');
    expect(render('```c++\nint x;\n```')).toBe('<pre><code class="language-c++">int x;</code></pre>');
  });

  it('drops characters from a language name that could break the attribute', () => {
    expect(render('```js"><b>\nx\n```')).toBe('<pre><code class="language-jsb">x</code></pre>');
  });

  it('renders bold, italic, strikethrough and their nesting', () => {
    expect(render('**bold** *it* ~~gone~~')).toBe('<b>bold</b> <i>it</i> <s>gone</s>');
    expect(render('**bold _and italic_ ~~and struck~~**')).toBe('<b>bold <i>and italic</i> <s>and struck</s></b>');
    expect(render('***both***')).toMatch(/^<(b|i)><(b|i)>both<\/(b|i)><\/(b|i)>$/);
  });

  it('renders links with escaped href, and autolinks', () => {
    expect(render('[docs](https://example.com/a?x=1&y="2")')).toBe('<a href="https://example.com/a?x=1&amp;y=&quot;2&quot;">docs</a>');
    expect(render('see https://example.com/x')).toBe('see <a href="https://example.com/x">https://example.com/x</a>');
  });

  it('shows links with schemes Telegram would not open as their text only', () => {
    expect(render('[click](javascript:alert(1))')).toBe('click');
  });

  it('renders reference links through their definitions', () => {
    expect(render('read [the guide][g]\n\n[g]: https://example.com/guide')).toBe('read <a href="https://example.com/guide">the guide</a>');
  });

  it('renders headings as bold lines', () => {
    expect(render('# Title <1>\n\ntext')).toBe('<b>Title &lt;1&gt;</b>\n\ntext');
  });

  it('renders bullet and numbered lists, nested ones indented', () => {
    expect(render('- one\n- two\n  - inner')).toBe('• one\n• two\n  • inner');
    expect(render('3. three\n4. four')).toBe('3. three\n4. four');
    expect(render('- [x] done\n- [ ] open')).toBe('• ☑ done\n• ☐ open');
  });

  it('keeps code blocks inside list items unindented', () => {
    const html = render('1. run:\n\n   ```sh\n   npm test\n   ```');
    expect(html).toContain('<pre><code class="language-sh">npm test</code></pre>');
  });

  it('renders blockquotes, flattening nested ones and keeping code outside the quote', () => {
    expect(render('> quoted *text*\n> > nested')).toBe('<blockquote>quoted <i>text</i>\nnested</blockquote>');
    const html = render('> before\n> ```\n> code\n> ```\n> after');
    expect(html).toBe('<blockquote>before</blockquote>\n<pre>code</pre>\n<blockquote>after</blockquote>');
  });

  it('renders tables as aligned preformatted text', () => {
    const html = render('| name | n |\n|:--|--:|\n| a<b | 10 |\n| long name | 2 |');
    expect(html).toBe('<pre>name      |  n\n----------+---\na&lt;b       | 10\nlong name |  2</pre>');
  });

  it('shows raw HTML from the model as text, never as markup', () => {
    expect(render('<script>alert(1)</script>')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(render('a <b>b</b> c')).toBe('a &lt;b&gt;b&lt;/b&gt; c');
  });

  it('keeps line breaks inside paragraphs', () => {
    expect(render('line one\nline two')).toBe('line one\nline two');
  });
});
