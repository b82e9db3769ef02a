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

/** A TTY-like output `columns` wide that records what is written. */
function tty(columns = 40) {
  const output = Object.assign(new PassThrough(), { isTTY: true, columns });
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  return { output, written: () => written };
}

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
    const rendered = renderMarkdown('Here is **the list**:\n\n- one\n- two', 72);
    expect(rendered).not.toContain('**');
    expect(rendered).toMatch(/\* one\n\s*\* two/);
    // Redrawn over the streamed text, not printed after it.
    // eslint-disable-next-line no-control-regex -- the cursor movement is what is checked
    expect(out.written()).toMatch(/- one\x1b\[1G\x1b\[\d+A\x1b\[0Jpincer: /);
    expect(out.written().endsWith(`pincer: ${rendered}`)).toBe(true);
  });
});
