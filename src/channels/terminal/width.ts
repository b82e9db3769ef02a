/**
 * How much room text takes on a terminal: the columns of a line and the rows
 * of a block once long lines wrap. Escape sequences take no room, combining
 * marks and variation selectors none either, and wide characters (CJK, emoji
 * shown as pictures) two columns. Redrawing a message in place moves the
 * cursor up by this count, so it errs the way terminals mostly draw.
 */

// CSI (colours, cursor moves) and OSC (hyperlinks, titles) sequences.
// eslint-disable-next-line no-control-regex -- measuring what escape sequences do not take up
const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\u{FE00}-\u{FE0F}]$/u;
const WIDE = /^[\p{Emoji_Presentation}\u{1100}-\u{115F}\u{2E80}-\u{303E}\u{3041}-\u{33FF}\u{3400}-\u{4DBF}\u{4E00}-\u{9FFF}\u{A000}-\u{A4CF}\u{AC00}-\u{D7A3}\u{F900}-\u{FAFF}\u{FE30}-\u{FE4F}\u{FF00}-\u{FF60}\u{FFE0}-\u{FFE6}\u{20000}-\u{3FFFD}]$/u;

/**
 * The columns one line takes on a terminal.
 *
 * @example columnsOf('\x1b[1mhi\x1b[22m 日本') // 7
 */
export function columnsOf(line: string): number {
  let columns = 0;
  for (const char of line.replace(ESCAPES, '')) {
    if (ZERO_WIDTH.test(char)) continue;
    columns += WIDE.test(char) ? 2 : 1;
  }
  return columns;
}

/**
 * Screen rows `text` takes in a terminal `columns` wide: each line at least
 * one, a long line one per started screen width.
 *
 * @example rowsOf('a\n' + 'x'.repeat(100), 40) // 4
 */
export function rowsOf(text: string, columns: number): number {
  const width = Math.max(1, columns);
  return text.split('\n').reduce((rows, line) => rows + Math.max(1, Math.ceil(columnsOf(line) / width)), 0);
}
