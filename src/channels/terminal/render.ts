/**
 * How text looks in the terminal: cleaned of control characters (the agent's
 * outbox has already redacted secrets), lightly coloured on a colour
 * terminal, and on a TTY a finished answer's markdown rendered (bold, code,
 * lists, tables) with marked and marked-terminal. While an answer streams it
 * is shown as written: a construct cut in two by an edit cannot be rendered.
 */
import { Marked, type MarkedExtension, type Tokens } from 'marked';
import { markedTerminal, type TerminalRendererOptions } from 'marked-terminal';

/** The few styles the terminal channel uses; identity functions when colour is off. */
export interface TerminalStyle {
  /** The bot's name in front of its messages. */
  botName(text: string): string;
  /** Status lines, hints and notices: visible but out of the way. */
  dim(text: string): string;
  /** The approval question, which needs an answer. */
  bold(text: string): string;
  /** Whether these styles colour: markdown is rendered with colours too. */
  readonly color: boolean;
}

const PLAIN: TerminalStyle = { botName: (t) => t, dim: (t) => t, bold: (t) => t, color: false };

/** Styles with ANSI colours when `color` is true, plain text otherwise. */
export function terminalStyle(color: boolean): TerminalStyle {
  if (!color) return PLAIN;
  return {
    botName: (t) => `\x1b[1;36m${t}\x1b[22;39m`,
    dim: (t) => `\x1b[2m${t}\x1b[22m`,
    bold: (t) => `\x1b[1m${t}\x1b[22m`,
    color: true,
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

const renderers = new Map<string, Marked>();

/**
 * Markdown rendered for a terminal `width` columns wide, trailing blank lines
 * dropped: with colours, or when `color` is false with the structure (lists,
 * tables, indented code) and the emphasis markers as written.
 *
 * @example renderMarkdown('- **one**\n- two', 80, false) // '  * **one**\n  * two'
 */
export function renderMarkdown(text: string, width: number, color = true): string {
  const key = `${color}:${width}`;
  let marked = renderers.get(key);
  if (!marked) {
    marked = markdownRenderer(width, color);
    renderers.set(key, marked);
  }
  try {
    return (marked.parse(text, { async: false }) as string).replace(/\s+$/, '');
  } catch {
    return text;
  }
}

const same = (text: string) => text;
/** A style as SGR codes: on, then off. */
const sgr = (on: string, off: string) => (text: string) => `\x1b[${on}m${text}\x1b[${off}m`;

/** Coloured styles of our own, so that `color` decides rather than chalk's guess about stdout. */
const COLOURED: TerminalRendererOptions = {
  code: sgr('33', '39'),
  codespan: sgr('33', '39'),
  strong: sgr('1', '22'),
  em: sgr('3', '23'),
  del: sgr('9', '29'),
  heading: sgr('1;32', '22;39'),
  firstHeading: sgr('1;4;35', '22;24;39'),
  blockquote: sgr('3;90', '23;39'),
  link: sgr('34', '39'),
  href: sgr('4;34', '24;39'),
};

/** Uncoloured styles: everything as it is, but the markers that carry emphasis without colour. */
const UNCOLOURED: TerminalRendererOptions = {
  ...Object.fromEntries(['code', 'blockquote', 'html', 'heading', 'firstHeading', 'hr', 'listitem', 'table', 'paragraph', 'link', 'href', 'text'].map((name) => [name, same])),
  strong: (text: string) => `**${text}**`,
  em: (text: string) => `_${text}_`,
  codespan: (text: string) => `\`${text}\``,
  del: (text: string) => `~~${text}~~`,
  tableOptions: { style: { head: [], border: [] } },
};

function markdownRenderer(width: number, color: boolean): Marked {
  // `:name:` stays as written (times, paths); the rule is as wide as the text, not the process's stdout.
  const options: TerminalRendererOptions = { ...(color ? COLOURED : UNCOLOURED), reflowText: false, width, tab: 2, emoji: false };
  const own: MarkedExtension = { renderer: { hr: () => `${'─'.repeat(Math.min(width, 40))}\n\n` } };
  // Code blocks are highlighted with colours that ignore `color`: uncoloured, they are only indented.
  if (!color) own.renderer!.code = ({ text: code }: Tokens.Code) => `${code.replace(/^/gm, '  ')}\n\n`;
  return new Marked(markedTerminal(options) as MarkedExtension, own);
}
