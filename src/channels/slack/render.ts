/**
 * Markdown (as the model writes it) to Slack mrkdwn, through one markdown tree
 * (mdast with GFM) rather than regular expressions, so that code, links and
 * nesting are recognised the way a markdown reader would.
 *
 * Slack mrkdwn has no headings, tables or nested formatting markers, so headings
 * become bold lines, tables become aligned code blocks and lists become `•` or
 * numbered lines. Text is escaped (`&`, `<`, `>`) everywhere, code included,
 * because Slack parses those characters as its own control sequences.
 */
import type { Definition, Nodes, Parents, PhrasingContent, RootContent, Table } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';

/** Inline formatting already open around a node: Slack cannot nest the same marker. */
interface Context {
  definitions: Map<string, Definition>;
  bold: boolean;
  italic: boolean;
  strike: boolean;
}

const BULLETS = ['•', '◦', '▪'];
const SAFE_URL = /^(https?:|mailto:)/i;

/**
 * Renders markdown as Slack mrkdwn.
 * @example markdownToMrkdwn('**hi** <you>') // '*hi* &lt;you&gt;'
 */
export function markdownToMrkdwn(markdown: string): string {
  const tree = fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const ctx: Context = { definitions: collectDefinitions(tree), bold: false, italic: false, strike: false };
  return renderBlocks(tree.children, ctx).replace(/\s+$/, '');
}

/** Escapes the three characters Slack reads as markup in any text. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function collectDefinitions(tree: Parents): Map<string, Definition> {
  const found = new Map<string, Definition>();
  const visit = (node: Nodes) => {
    if (node.type === 'definition') found.set(node.identifier, node);
    if ('children' in node) for (const child of node.children) visit(child);
  };
  visit(tree);
  return found;
}

function renderBlocks(nodes: RootContent[], ctx: Context, separator = '\n\n'): string {
  return nodes
    .map((node) => renderBlock(node, ctx))
    .filter((text) => text !== '')
    .join(separator);
}

function renderBlock(node: RootContent, ctx: Context): string {
  switch (node.type) {
    case 'paragraph':
      return renderInline(node.children, ctx);
    case 'heading':
      return bold(renderInline(node.children, { ...ctx, bold: true }));
    case 'thematicBreak':
      return '──────────';
    case 'blockquote':
      return quote(renderBlocks(node.children, ctx));
    case 'list':
      return renderList(node.children, node.ordered ? (node.start ?? 1) : undefined, node.spread, ctx, 0);
    case 'code':
      return codeBlock(node.value);
    case 'html':
      return escapeMrkdwn(node.value);
    case 'table':
      return renderTable(node);
    case 'definition':
      return '';
    case 'footnoteDefinition':
      return `[${escapeMrkdwn(node.label ?? node.identifier)}]: ${renderBlocks(node.children, ctx, '\n')}`;
    default:
      return 'children' in node ? renderInline(node.children as PhrasingContent[], ctx) : '';
  }
}

function renderList(items: RootContent[], start: number | undefined, spread: boolean | null | undefined, ctx: Context, depth: number): string {
  const lines = items.map((item, index) => {
    const marker = start === undefined ? BULLETS[depth % BULLETS.length]! : `${start + index}.`;
    return renderListItem(item, marker, ctx, depth);
  });
  return lines.join(spread ? '\n\n' : '\n');
}

function renderListItem(item: RootContent, marker: string, ctx: Context, depth: number): string {
  if (item.type !== 'listItem') return renderBlock(item, ctx);
  const indent = '    '.repeat(depth);
  const check = item.checked === true ? '☑ ' : item.checked === false ? '☐ ' : '';
  const parts = item.children.map((child) =>
    child.type === 'list'
      ? renderList(child.children, child.ordered ? (child.start ?? 1) : undefined, child.spread, ctx, depth + 1)
      : renderBlock(child, ctx),
  );
  const [first = '', ...rest] = parts;
  const head = `${indent}${marker} ${check}${first}`;
  return [head, ...rest].join('\n');
}

function renderTable(table: Table): string {
  const rows = table.children.map((row) => row.children.map((cell) => plainText(cell).replace(/\s+/g, ' ').trim()));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ').trimEnd();
  const [header, ...body] = rows;
  if (!header) return '';
  const rule = widths.map((width) => '-'.repeat(width)).join('-+-');
  return codeBlock([line(header), rule, ...body.map(line)].join('\n'));
}

function renderInline(nodes: PhrasingContent[], ctx: Context): string {
  return nodes.map((node) => renderPhrasing(node, ctx)).join('');
}

function renderPhrasing(node: PhrasingContent, ctx: Context): string {
  switch (node.type) {
    case 'text':
      return escapeMrkdwn(node.value);
    case 'strong':
      return ctx.bold ? renderInline(node.children, ctx) : bold(renderInline(node.children, { ...ctx, bold: true }));
    case 'emphasis':
      return ctx.italic ? renderInline(node.children, ctx) : wrap('_', renderInline(node.children, { ...ctx, italic: true }));
    case 'delete':
      return ctx.strike ? renderInline(node.children, ctx) : wrap('~', renderInline(node.children, { ...ctx, strike: true }));
    case 'inlineCode':
      return `\`${escapeMrkdwn(node.value)}\``;
    case 'break':
      return '\n';
    case 'link':
      return link(node.url, plainText(node));
    case 'image':
      return link(node.url, node.alt ?? '');
    case 'linkReference':
    case 'imageReference':
      return renderReference(node, ctx);
    case 'footnoteReference':
      return `[${escapeMrkdwn(node.label ?? node.identifier)}]`;
    case 'html':
      return escapeMrkdwn(node.value);
    default:
      return '';
  }
}

function renderReference(node: PhrasingContent & { identifier: string }, ctx: Context): string {
  const text = node.type === 'imageReference' ? (node.alt ?? '') : plainText(node);
  const definition = ctx.definitions.get(node.identifier);
  return definition ? link(definition.url, text) : escapeMrkdwn(`[${text}]`);
}

/** `<url|text>` for web and mail links; other schemes (and relative links) show the text only. */
function link(url: string, text: string): string {
  if (!SAFE_URL.test(url)) return escapeMrkdwn(text || url);
  const target = url.replace(/[<>| ]/g, encodeURIComponent).replace(/&/g, '&amp;');
  const shown = text || url;
  if (/^mailto:/i.test(url)) return `<${target}|${escapeMrkdwn(shown.replace(/^mailto:/i, ''))}>`;
  return shown === url ? `<${target}>` : `<${target}|${escapeMrkdwn(shown)}>`;
}

function bold(text: string): string {
  return wrap('*', text);
}

/** Formatting markers only around non-blank text: Slack shows `**` literally. */
function wrap(marker: string, text: string): string {
  return text.trim() ? `${marker}${text}${marker}` : text;
}

function codeBlock(value: string): string {
  return `\`\`\`\n${escapeMrkdwn(value.replace(/\n+$/, ''))}\n\`\`\``;
}

function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n');
}

function plainText(node: Nodes): string {
  if ('value' in node && typeof node.value === 'string') return node.value;
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? '';
  if ('children' in node) return (node.children as Nodes[]).map(plainText).join('');
  return '';
}
