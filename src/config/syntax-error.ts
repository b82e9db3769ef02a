/**
 * Where a syntax mistake in the config file is, in words a person can act on.
 * The YAML parser reports where it noticed a problem, which is often later
 * than the mistake: an unclosed quote is noticed at the end of the file, an
 * unclosed bracket on the next line, a line indented too deep on the line
 * above it. So the place is looked for from what the parser says: the quote
 * or bracket that was opened and never closed, or the line indented deeper
 * than the key before it. JSON names a character position; it becomes a line
 * and a column too.
 */
import { Lexer, YAMLParseError } from 'yaml';

/** A place in a text, both counted from 1. */
export interface TextPlace {
  line: number;
  column: number;
}

/** A mistake, where it is, and what it is. */
interface Mistake extends TextPlace {
  reason: string;
}

/**
 * One line describing a syntax error of the config file `file` holding
 * `text`, with the line it points at and a caret under the column.
 *
 * @example
 * syntaxErrorText('pincer.yaml', 'a: "b\nc: 1\n', yamlError)
 * // 'pincer.yaml: not valid YAML at line 1, column 4: this quote is never closed\n  a: "b\n     ^'
 */
export function syntaxErrorText(file: string, text: string, error: unknown, format: 'YAML' | 'JSON'): string {
  const mistake = format === 'YAML' ? yamlMistake(text, error) : jsonMistake(text, error);
  const reason = mistake?.reason ?? firstLine(error);
  if (!mistake) return `${file}: not valid ${format}: ${reason}`;
  const shown = text.split(/\r?\n/)[mistake.line - 1] ?? '';
  return `${file}: not valid ${format} at line ${mistake.line}, column ${mistake.column}: ${reason}\n  ${shown}\n  ${' '.repeat(mistake.column - 1)}^`;
}

/** The place of offset `offset` in `text`. */
export function placeOf(text: string, offset: number): TextPlace {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

function yamlMistake(text: string, error: unknown): Mistake | undefined {
  if (!(error instanceof YAMLParseError)) return undefined;
  const noticed = error.pos[0];
  const opened = neverClosed(text).filter((open) => open.offset <= noticed).at(-1);
  if (opened) return { ...placeOf(text, opened.offset), reason: `this ${opened.what} is never closed` };
  const reason = firstLine(error).replace(/ at line \d+, column \d+:?$/, '');
  const lines = text.split('\n');
  const place = placeOf(text, noticed);
  if (error.code === 'BLOCK_AS_IMPLICIT_KEY' || error.code === 'MULTILINE_IMPLICIT_KEY') {
    const deeper = deeperLineAfter(lines, place.line);
    if (deeper) return { ...deeper, reason: 'this line is indented deeper than the key above it' };
  }
  // Noticed past the last line (the file ended early): the last line that holds something.
  if (place.line > lines.length || !lines[place.line - 1]!.trim()) return { ...lastFilledLine(lines), reason };
  // Noticed in a line's indentation: the item that is indented wrongly, unless a tab is the mistake.
  const indent = indentOf(lines[place.line - 1]!);
  if (place.column <= indent && error.code !== 'TAB_AS_INDENT') return { line: place.line, column: indent + 1, reason };
  return { ...place, reason };
}

/** The quotes and brackets opened and never closed, in the order they were opened. */
function neverClosed(text: string): Array<{ offset: number; what: string }> {
  const open: Array<{ offset: number; what: string }> = [];
  let at = 0;
  for (const token of new Lexer().lex(text)) {
    // The lexer's own markers (document start, scalar, flow error) are not in the text.
    // eslint-disable-next-line no-control-regex -- those markers are control characters
    if (/^[\x02\x18\x1f]$/.test(token)) continue;
    if (token === '[' || token === '{') open.push({ offset: at, what: token });
    else if (token === ']' || token === '}') open.pop();
    else if (/^["']/.test(token) && !closedQuote(token)) open.push({ offset: at, what: 'quote' });
    at += token.length;
  }
  return open;
}

/** Whether a quoted scalar's text ends with its closing quote. */
function closedQuote(token: string): boolean {
  const quote = token[0]!;
  if (token.length < 2 || !token.endsWith(quote)) return false;
  // In double quotes, a backslash escapes the quote after it; in single quotes, a quote is doubled.
  if (quote === '"') return /(?:^|[^\\])(?:\\\\)*"$/.test(token.slice(1));
  return /(?:^|[^'])(?:'')*'$/.test(token.slice(1));
}

/** The first line after `line` that holds something, when it is indented deeper than `line`. */
function deeperLineAfter(lines: string[], line: number): TextPlace | undefined {
  const next = lines.findIndex((value, index) => index >= line && value.trim() !== '');
  if (next < 0 || indentOf(lines[next]!) <= indentOf(lines[line - 1] ?? '')) return undefined;
  return { line: next + 1, column: indentOf(lines[next]!) + 1 };
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function lastFilledLine(lines: string[]): TextPlace {
  let index = lines.length - 1;
  while (index > 0 && !lines[index]!.trim()) index -= 1;
  return { line: index + 1, column: Math.max(1, lines[index]!.trimEnd().length) };
}

function jsonMistake(text: string, error: unknown): Mistake | undefined {
  const position = /at position (\d+)/.exec(firstLine(error));
  if (!position) return undefined;
  return { ...placeOf(text, Number(position[1])), reason: firstLine(error).replace(/ in JSON at position \d+.*$/, '') };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();
}
