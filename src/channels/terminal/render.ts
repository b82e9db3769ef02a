/**
 * How text looks in the terminal: cleaned of control characters (the agent's
 * outbox has already redacted secrets), lightly coloured on a colour
 * terminal, and on a TTY a finished answer's markdown rendered (bold, code,
 * lists, tables) with marked and marked-terminal. While an answer streams it
 * is shown as written: a construct cut in two by an edit cannot be rendered.
 */
import { Marked } from 'marked';
import { markedTerminal } from 'marked-terminal';
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

const renderers = new Map<number, Marked>();

/** Markdown rendered for a terminal `width` columns wide; trailing blank lines dropped. */
export function renderMarkdown(text: string, width: number): string {
  let marked = renderers.get(width);
  if (!marked) {
    marked = new Marked(markedTerminal({ reflowText: false, width, tab: 2 }) as Parameters<Marked['use']>[0]);
    renderers.set(width, marked);
  }
  try {
    return (marked.parse(text, { async: false }) as string).replace(/\s+$/, '');
  } catch {
    return text;
  }
}
