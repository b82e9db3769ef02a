/**
 * What a terminal shows after a stream of output: a small emulator of the
 * few things the terminal channel and the line editor do (printing with
 * wrapping, carriage return and line feed, cursor moves, erasing a line or
 * the rest of the screen). Colours and other sequences are ignored. It lets a
 * test check what a person sees, not which bytes were sent: text redrawn in
 * place shows once.
 */

// CSI with its parameters and final byte, OSC up to BEL or ST, and two-byte escapes.
// eslint-disable-next-line no-control-regex -- reading escape sequences is the point
const SEQUENCE = /^(?:\x1b\[([0-9;?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78])/;

/**
 * The lines `output` leaves on a terminal `columns` wide, trailing spaces
 * trimmed. The scrollback has no limit, so a cursor moved up is never clamped
 * at the top of a window.
 */
export function visibleLines(output: string, columns: number): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let column = 0;
  const line = () => (rows[row] ??= []);
  for (let i = 0; i < output.length; ) {
    const sequence = output[i] === '\x1b' ? SEQUENCE.exec(output.slice(i)) : null;
    if (sequence) {
      [row, column] = apply(rows, row, column, sequence[1] ?? '', sequence[2] ?? '');
      i += sequence[0].length;
      continue;
    }
    const char = String.fromCodePoint(output.codePointAt(i)!);
    i += char.length;
    if (char === '\r') column = 0;
    // A pty's line discipline (onlcr) turns a line feed into a new line at column 0.
    else if (char === '\n') [row, column] = [row + 1, 0];
    else if (char === '\b') column = Math.max(0, column - 1);
    else if (char >= ' ') {
      if (column >= columns) [row, column] = [row + 1, 0];
      line()[column] = char;
      column += 1;
    }
    line();
  }
  for (let r = 0; r < rows.length; r++) rows[r] ??= [];
  return rows.map((cells) => Array.from(cells, (cell) => cell ?? ' ').join('').trimEnd());
}

/** One CSI sequence's effect on the cursor and the cells; the new cursor position. */
function apply(rows: string[][], row: number, column: number, params: string, final: string): [number, number] {
  const n = Number.parseInt(params, 10) || 1;
  const cells = (rows[row] ??= []);
  switch (final) {
    case 'A':
      return [Math.max(0, row - n), column];
    case 'B':
      return [row + n, column];
    case 'C':
      return [row, column + n];
    case 'D':
      return [row, Math.max(0, column - n)];
    case 'G':
      return [row, n - 1];
    case 'K':
      if (params === '2') cells.length = 0;
      else if (params === '1') cells.fill(' ', 0, column + 1);
      else cells.length = Math.min(cells.length, column);
      return [row, column];
    case 'J':
      cells.length = Math.min(cells.length, column);
      rows.length = Math.min(rows.length, row + 1);
      return [row, column];
    default:
      return [row, column];
  }
}
