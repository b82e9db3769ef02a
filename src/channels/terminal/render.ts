/**
 * How text looks in the terminal: cleaned of control characters (the agent's
 * outbox has already redacted secrets), and lightly coloured when the output is a colour terminal. Markdown is shown
 * as written: a terminal reader reads `**bold**` and fences fine, and styling
 * by parsing would break when a streamed edit cuts a construct in two.
 */
/** The few styles the terminal channel uses; identity functions when colour is off. */
export interface TerminalStyle {
  /** The bot's name in front of its messages. */
  botName(text: string): string;
  /** Status lines, hints and notices: visible but out of the way. */
  dim(text: string): string;
  /** The approval question, which needs an answer. */
  bold(text: string): string;
}

const PLAIN: TerminalStyle = { botName: (t) => t, dim: (t) => t, bold: (t) => t };

/** Styles with ANSI colours when `color` is true, plain text otherwise. */
export function terminalStyle(color: boolean): TerminalStyle {
  if (!color) return PLAIN;
  return {
    botName: (t) => `\x1b[1;36m${t}\x1b[22;39m`,
    dim: (t) => `\x1b[2m${t}\x1b[22m`,
    bold: (t) => `\x1b[1m${t}\x1b[22m`,
  };
}

// Everything below a space except newline and tab, DEL, and the 8-bit CSI: model
// or tool text could otherwise carry escape sequences that move the cursor,
// rewrite what the reader sees, or set the window title.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f\x9b]/g;

/**
 * `text` made safe to write to a terminal: no escape sequences or other
 * control characters but newline and tab.
 */
export function terminalText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(CONTROL, '');
}
