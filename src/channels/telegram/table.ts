/**
 * GFM tables as preformatted text: Telegram has no table markup, and aligned
 * monospace columns are what reads best in a chat bubble.
 */
import type { AlignType, Table } from 'mdast';
import { plainTextOf } from './plain-text.js';

/** The table as aligned plain-text lines (not escaped), header separated by dashes. */
export function tableAsText(table: Table): string {
  const rows = table.children.map((row) => row.children.map((cell) => plainTextOf(cell).replace(/\s+/g, ' ').trim()));
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(1, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const align = table.align ?? [];
  const lines = rows.map((row) =>
    widths.map((width, column) => pad(row[column] ?? '', width, align[column] ?? null)).join(' | ').trimEnd(),
  );
  if (lines.length > 1) lines.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('-+-'));
  return lines.join('\n');
}

function pad(text: string, width: number, align: AlignType): string {
  const room = width - text.length;
  if (align === 'right') return ' '.repeat(room) + text;
  if (align === 'center') {
    const left = Math.floor(room / 2);
    return ' '.repeat(left) + text + ' '.repeat(room - left);
  }
  return text + ' '.repeat(room);
}
