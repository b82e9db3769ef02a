/**
 * How text looks in the terminal: cleaned of control characters (the agent's
 * outbox has already redacted secrets), lightly coloured on a colour
 * terminal, and on a TTY a finished answer's markdown rendered (bold, code,
 * lists, tables) from marked's tokens. While an answer streams it is shown as
 * written: a construct cut in two by an edit cannot be rendered.
 */
import { Lexer, type Token, type Tokens } from 'marked';

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

/**
 * Markdown rendered for a terminal `width` columns wide, trailing blank lines
 * dropped: with colours, or when `color` is false with the structure (lists,
 * tables, indented code) and the emphasis markers as written. Code blocks are
 * indented and coloured, not highlighted by language.
 *
 * @example renderMarkdown('- **one**\n- two', 80, false) // '  * **one**\n  * two'
 */
export function renderMarkdown(text: string, width: number, color = true): string {
  try {
    const renderer = new MarkdownRenderer(color ? COLOURED : UNCOLOURED, width);
    return renderer.blocks(Lexer.lex(text)).replace(/\s+$/, '');
  } catch {
    return text;
  }
}

/** How each kind of text is marked. */
interface MarkdownStyles {
  strong(text: string): string;
  em(text: string): string;
  codespan(text: string): string;
  del(text: string): string;
  code(text: string): string;
  heading(text: string): string;
  firstHeading(text: string): string;
  blockquote(text: string): string;
  link(text: string): string;
  href(text: string): string;
  tableHead(text: string): string;
}

const same = (text: string) => text;
/** A style as SGR codes: on, then off. */
const sgr = (on: string, off: string) => (text: string) => `\x1b[${on}m${text}\x1b[${off}m`;

/** Coloured styles of our own, so that `color` decides rather than a guess about stdout. */
const COLOURED: MarkdownStyles = {
  strong: sgr('1', '22'),
  em: sgr('3', '23'),
  codespan: sgr('33', '39'),
  del: sgr('9', '29'),
  code: sgr('33', '39'),
  heading: sgr('1;32', '22;39'),
  firstHeading: sgr('1;4;35', '22;24;39'),
  blockquote: sgr('3;90', '23;39'),
  link: sgr('34', '39'),
  href: sgr('4;34', '24;39'),
  tableHead: sgr('1', '22'),
};

/** Uncoloured styles: everything as it is, but the markers that carry emphasis without colour. */
const UNCOLOURED: MarkdownStyles = {
  strong: (text) => `**${text}**`,
  em: (text) => `_${text}_`,
  codespan: (text) => `\`${text}\``,
  del: (text) => `~~${text}~~`,
  code: same,
  heading: same,
  firstHeading: same,
  blockquote: same,
  link: same,
  href: same,
  tableHead: same,
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** `text` with HTML entities decoded, as a markdown reader sees them. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return ENTITIES[name.toLowerCase()] ?? entity;
  });
}

// eslint-disable-next-line no-control-regex -- the colour codes this renderer writes
const SGR = /\x1b\[[0-9;]*m/g;

/** Columns `text` takes on a terminal: colour codes take none, wide characters (CJK, emoji) two. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text.replace(SGR, '')) {
    const code = char.codePointAt(0)!;
    if ((code >= 0x300 && code <= 0x36f) || (code >= 0x200b && code <= 0x200f) || code === 0xfe0f) continue;
    const wide =
      (code >= 0x1100 && code <= 0x115f) ||
      (code >= 0x2e80 && code <= 0xa4cf) ||
      (code >= 0xac00 && code <= 0xd7a3) ||
      (code >= 0xf900 && code <= 0xfaff) ||
      (code >= 0xfe30 && code <= 0xfe4f) ||
      (code >= 0xff00 && code <= 0xff60) ||
      (code >= 0xffe0 && code <= 0xffe6) ||
      (code >= 0x1f300 && code <= 0x1faff) ||
      (code >= 0x20000 && code <= 0x3fffd);
    width += wide ? 2 : 1;
  }
  return width;
}

/** `text` with `prefix` in front of each of its lines. */
function indent(text: string, prefix: string): string {
  return text.replace(/^(?=.)/gm, prefix);
}

/** Writes marked's tokens as terminal text: each block followed by a blank line. */
class MarkdownRenderer {
  constructor(
    private readonly style: MarkdownStyles,
    private readonly width: number,
  ) {}

  blocks(tokens: Token[]): string {
    return tokens.map((token) => this.block(token)).join('');
  }

  private block(token: Token): string {
    switch (token.type) {
      case 'paragraph':
        return `${this.inline((token as Tokens.Paragraph).tokens)}\n\n`;
      case 'heading': {
        const { depth, tokens } = token as Tokens.Heading;
        const text = `${'#'.repeat(depth)} ${this.inline(tokens)}`;
        return `${depth === 1 ? this.style.firstHeading(text) : this.style.heading(text)}\n\n`;
      }
      case 'code':
        return `${indent((token as Tokens.Code).text.split('\n').map(this.style.code).join('\n'), '  ')}\n\n`;
      case 'blockquote':
        return `${indent(this.style.blockquote(this.blocks((token as Tokens.Blockquote).tokens).replace(/\s+$/, '')), '    ')}\n\n`;
      case 'list':
        return `${this.list(token as Tokens.List)}\n\n`;
      case 'table':
        return `${this.table(token as Tokens.Table)}\n\n`;
      case 'hr':
        return `${'─'.repeat(Math.min(this.width, 40))}\n\n`;
      case 'html':
        return `${(token as Tokens.HTML).text.replace(/\s+$/, '')}\n\n`;
      case 'text': {
        const text = token as Tokens.Text;
        return `${text.tokens ? this.inline(text.tokens) : decodeEntities(text.text)}\n\n`;
      }
      case 'space':
      case 'def':
        return '';
      default:
        return 'raw' in token && typeof token.raw === 'string' ? `${token.raw.replace(/\s+$/, '')}\n\n` : '';
    }
  }

  /** A list, two spaces in; a nested list under its item's text. */
  private list(list: Tokens.List, nested = false): string {
    const start = typeof list.start === 'number' ? list.start : 1;
    const items = list.items.map((item, index) => {
      const bullet = list.ordered ? `${start + index}. ` : '* ';
      const box = item.task ? (item.checked ? '[x] ' : '[ ] ') : '';
      const content = item.tokens
        .filter((token) => token.type !== 'checkbox')
        .map((token) => (token.type === 'text' ? `${this.block(token).replace(/\n+$/, '')}\n` : token.type === 'list' ? `${this.list(token as Tokens.List, true)}\n` : this.block(token)))
        .join('')
        .replace(/\s+$/, '');
      const [first = '', ...rest] = content.split('\n');
      return [`${bullet}${box}${first}`, ...rest.map((line) => (line ? `${' '.repeat(bullet.length)}${line}` : line))].join('\n');
    });
    const text = items.join(list.loose ? '\n\n' : '\n');
    return nested ? text : indent(text, '  ');
  }

  /** A table drawn with box characters, each column as wide as its widest cell. */
  private table(table: Tokens.Table): string {
    const head = table.header.map((cell) => this.style.tableHead(this.inline(cell.tokens)));
    const rows = table.rows.map((row) => row.map((cell) => this.inline(cell.tokens)));
    const widths = head.map((cell, column) => Math.max(displayWidth(cell), ...rows.map((row) => displayWidth(row[column] ?? ''))));
    const pad = (cell: string, column: number) => {
      const room = widths[column]! - displayWidth(cell);
      const align = table.align[column];
      if (align === 'right') return ' '.repeat(room) + cell;
      if (align === 'center') return ' '.repeat(Math.floor(room / 2)) + cell + ' '.repeat(Math.ceil(room / 2));
      return cell + ' '.repeat(room);
    };
    const line = (cells: string[]) => `│ ${widths.map((_, column) => pad(cells[column] ?? '', column)).join(' │ ')} │`;
    const rule = (left: string, middle: string, right: string) => `${left}${widths.map((width) => '─'.repeat(width + 2)).join(middle)}${right}`;
    return [rule('┌', '┬', '┐'), line(head), rule('├', '┼', '┤'), ...rows.map(line), rule('└', '┴', '┘')].join('\n');
  }

  private inline(tokens: Token[] | undefined): string {
    return (tokens ?? []).map((token) => this.span(token)).join('');
  }

  private span(token: Token): string {
    switch (token.type) {
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? this.inline(text.tokens) : decodeEntities(text.text);
      }
      case 'escape':
        return (token as Tokens.Escape).text;
      case 'strong':
        return this.style.strong(this.inline((token as Tokens.Strong).tokens));
      case 'em':
        return this.style.em(this.inline((token as Tokens.Em).tokens));
      case 'del':
        return this.style.del(this.inline((token as Tokens.Del).tokens));
      case 'codespan':
        return this.style.codespan(decodeEntities((token as Tokens.Codespan).text));
      case 'br':
        return '\n';
      case 'link': {
        const link = token as Tokens.Link;
        const text = this.inline(link.tokens);
        // A bare address is shown once; a named link shows where it goes.
        return text === link.href || `mailto:${text}` === link.href ? this.style.href(text) : `${this.style.link(text)} (${this.style.href(link.href)})`;
      }
      case 'image': {
        const image = token as Tokens.Image;
        return `${image.text ? `${image.text} ` : ''}(${this.style.href(image.href)})`;
      }
      default:
        return 'raw' in token && typeof token.raw === 'string' ? token.raw : '';
    }
  }
}
