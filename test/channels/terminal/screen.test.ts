/**
 * The terminal's screen on a TTY: a message still being written is redrawn in
 * place when it changes (the cursor goes back over its lines), and a finished
 * answer's markdown is rendered; off a TTY nothing is ever erased.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TerminalOutbound } from '../../../src/channels/terminal/outbound.js';
import { renderMarkdown, terminalStyle } from '../../../src/channels/terminal/render.js';
import { rowsOf, Screen } from '../../../src/channels/terminal/screen.js';
import { IN_PROGRESS_MARK } from '../../../src/channels/types.js';
import { visibleLines } from './virtual-screen.js';

/** A TTY-like output `columns` wide that records what is written. */
function tty(columns = 40) {
  const output = Object.assign(new PassThrough(), { isTTY: true, columns });
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  return { output, written: () => written };
}

/** Long enough for a screen made with a settle time of 5 ms to close its open message. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('the terminal screen on a TTY', () => {
  it('counts the rows a text takes, long lines wrapping', () => {
    expect(rowsOf('one line', 40)).toBe(1);
    expect(rowsOf('a\nb\nc', 40)).toBe(3);
    expect(rowsOf('x'.repeat(100), 40)).toBe(3);
    expect(rowsOf('\x1b[1mbold\x1b[22m', 4)).toBe(1);
  });

  it('redraws an open message in place: cursor up over its rows, clear, print', () => {
    const out = tty(40);
    const screen = new Screen(out.output, true, 10_000);
    screen.startMessage('m1', 'pincer: ⚙️ Running slow… 1 s\nsecond line');
    expect(screen.replaceMessage('m1', 'pincer: ⚙️ Running slow… 2 s')).toBe(true);
    // Back to column 0, one row up (two rows were printed), clear to the end of the screen.
    expect(out.written()).toContain('second line\x1b[1G\x1b[1A\x1b[0Jpincer: ⚙️ Running slow… 2 s');
    expect(screen.replaceMessage('other', 'x')).toBe(false);
  });

  it('redraws a settled message still above the prompt in place, over the prompt line too', async () => {
    const out = tty(40);
    const screen = new Screen(out.output, true, 5);
    screen.attachPrompt({ redraw: () => out.output.write('> '), isTyping: () => false });
    screen.startMessage('m1', 'pincer: ⚙️ Running slow… 1 s');
    await settled();
    expect(screen.replaceMessage('m1', 'pincer: ⚙️ Running slow… 2 s')).toBe(true);
    await settled();
    // The prompt line is wiped, the cursor goes up one row to the message, which is cleared and printed again.
    expect(out.written()).toBe('\x1b[1G\x1b[2Kpincer: ⚙️ Running slow… 1 s\n> \x1b[1G\x1b[2K\x1b[1A\x1b[0Jpincer: ⚙️ Running slow… 2 s\n> ');
  });

  it('prints again instead of redrawing once other output or a typed line came after the message', async () => {
    const out = tty(40);
    const screen = new Screen(out.output, true, 5);
    let typing = false;
    screen.attachPrompt({ redraw: () => undefined, isTyping: () => typing });
    screen.startMessage('m1', 'status 1');
    await settled();
    typing = true;
    expect(screen.replaceMessage('m1', 'status 2')).toBe(false);
    typing = false;
    screen.showPrompt();
    expect(screen.replaceMessage('m1', 'status 2')).toBe(false);
    screen.startMessage('m2', 'answer');
    screen.printBlock('✅ Approved');
    expect(screen.replaceMessage('m2', 'answer, edited')).toBe(false);
  });

  it('redraws the message right above the last one in place, and the last one under it as it was', async () => {
    const out = tty(40);
    const screen = new Screen(out.output, true, 5);
    screen.attachPrompt({ redraw: () => out.output.write('> '), isTyping: () => false });
    screen.startMessage('status', 'pincer: ⚙️ Running slow… 2 s');
    await settled();
    screen.startMessage('answer', 'pincer: the answer,\non two lines');
    expect(screen.replaceMessage('status', 'pincer: ⚙️ Used slow')).toBe(true);
    await settled();
    expect(screen.replaceMessage('status', 'pincer: ⚙️ Used slow, twice')).toBe(true);
    expect(visibleLines(out.written(), 40)).toEqual(['pincer: ⚙️ Used slow, twice', 'pincer: the answer,', 'on two lines', '>']);
    screen.printBlock('✅ Approved');
    expect(screen.replaceMessage('status', 'pincer: ⚙️ Used slow, again')).toBe(false);
  });

  it('does not redraw off a TTY', () => {
    const output = new PassThrough();
    const screen = new Screen(output, false, 10_000);
    screen.startMessage('m1', 'a');
    expect(screen.replaceMessage('m1', 'b')).toBe(false);
  });
});

describe('the terminal outbound on a TTY', () => {
  it('shows a streamed answer as written, then the finished one rendered in place', () => {
    const out = tty(80);
    const outbound = new TerminalOutbound(new Screen(out.output, true, 10_000), terminalStyle(false), 'pincer');
    const sent = outbound.send(`Here is **the list**:${IN_PROGRESS_MARK}`);
    outbound.edit(sent, `Here is **the list**:\n\n- one${IN_PROGRESS_MARK}`);
    expect(out.written()).toContain('pincer: Here is **the list**:\n\n- one');
    outbound.edit(sent, 'Here is **the list**:\n\n- one\n- two');
    const rendered = renderMarkdown('Here is **the list**:\n\n- one\n- two', 72, false);
    expect(rendered).toMatch(/\* one\n\s*\* two/);
    // Redrawn over the streamed text, not printed after it.
    // eslint-disable-next-line no-control-regex -- the cursor movement is what is checked
    expect(out.written()).toMatch(/- one\x1b\[1G\x1b\[\d+A\x1b\[0Jpincer: /);
    expect(out.written().endsWith(`pincer: ${rendered}`)).toBe(true);
  });

  it('leaves a streamed answer taller than the window as written rather than print it twice', () => {
    const out = tty(80);
    Object.assign(out.output, { rows: 3 });
    const outbound = new TerminalOutbound(new Screen(out.output, true, 10_000), terminalStyle(false), 'pincer');
    const sent = outbound.send(`one\ntwo\nthree\n- **four**${IN_PROGRESS_MARK}`);
    outbound.edit(sent, 'one\ntwo\nthree\n- **four**');
    expect(out.written()).toBe('\x1b[1G\x1b[2Kpincer: one\ntwo\nthree\n- **four**');
  });

  it('rewrites a status line updated after it settled in place, never as a second line', async () => {
    const out = tty(80);
    const outbound = new TerminalOutbound(new Screen(out.output, true, 5), terminalStyle(false), 'pincer');
    const status = outbound.send('⚙️ Running `slow`… 1 s');
    await settled();
    outbound.edit(status, '⚙️ Running `slow`… 2 s');
    await settled();
    outbound.edit(status, '⚙️ Running `slow`… 2 s, nearly done');
    // eslint-disable-next-line no-control-regex -- the cursor movement is what is checked
    expect(out.written().match(/\x1b\[1A\x1b\[0Jpincer: /g)).toHaveLength(2);
    expect(out.written()).not.toContain('…,');
    expect(out.written()).not.toContain('pincer: …');
  });
});

describe('the status line of a tool on a TTY', () => {
  it('shows the tools used above the answer they led to, though the answer was printed first', async () => {
    const out = tty(80);
    const screen = new Screen(out.output, true, 5);
    screen.attachPrompt({ redraw: () => out.output.write('> '), isTyping: () => false });
    const outbound = new TerminalOutbound(screen, terminalStyle(false), 'pincer');
    const status = outbound.send('⚙️ Running shell… 2 s');
    await settled();
    outbound.send('Done: it printed hello.');
    outbound.edit(status, '⚙️ Used shell');
    await settled();
    expect(visibleLines(out.written(), 80)).toEqual(['pincer: ⚙️ Used shell', 'pincer: Done: it printed hello.', '>']);
  });
});

describe('renderMarkdown', () => {
  const answer = 'Use **bold** and `code`:\n\n| name | size |\n|---|---|\n| a | 1 |\n\n```\nnpm test\n```';

  it('styles emphasis and code with colours, and draws tables', () => {
    const rendered = renderMarkdown(answer, 80, true);
    expect(rendered).toContain('Use \x1b[1mbold\x1b[22m and \x1b[33mcode\x1b[39m:');
    expect(rendered).not.toContain('**');
    // eslint-disable-next-line no-control-regex -- the table's text without its colours
    expect(rendered.replace(/\x1b\[[0-9;]*m/g, '')).toContain('│ name │ size │');
    // A code block is indented and coloured as a whole.
    expect(rendered).toContain('\n  \x1b[33mnpm test\x1b[39m');
  });

  it('draws nested lists under their item, numbered lists from their start, and aligned table columns', () => {
    const rendered = renderMarkdown('- one\n  - inner\n- [x] done\n\n3. third\n4. fourth\n\n| a | b |\n|---|--:|\n| long cell | 1 |\n| x | 22 |', 80, false);
    expect(rendered).toContain('  * one\n    * inner\n  * [x] done');
    expect(rendered).toContain('  3. third\n  4. fourth');
    expect(rendered).toContain('│ long cell │  1 │\n│ x         │ 22 │');
  });

  it('shows links with where they go, and decodes entities', () => {
    expect(renderMarkdown('See [the docs](https://example.com/d) &amp; https://example.com', 80, false)).toBe('See the docs (https://example.com/d) & https://example.com');
  });

  it('keeps the emphasis markers and uses no escape sequence without colour', () => {
    const rendered = renderMarkdown(answer, 80, false);
    expect(rendered).toContain('Use **bold** and `code`:');
    expect(rendered).toContain('│ name │ size │');
    expect(rendered).toContain('\n  npm test');
    expect(rendered).not.toContain('\x1b');
  });
});
