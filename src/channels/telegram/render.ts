/**
 * Renders the model's markdown as Telegram HTML. The markdown is parsed into a
 * tree (mdast with GFM) and every node is written out with only the tags
 * Telegram accepts, so the result is always balanced and every piece of text is
 * escaped exactly once.
 */
import type { Blockquote, Definition, List, ListItem, Nodes, PhrasingContent, RootContent } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';
import { escapeAttribute, escapeHtml } from './escape.js';
import { plainTextOf } from './plain-text.js';
import { tableAsText } from './table.js';

/** What a node's rendering depends on besides the node. */
interface RenderContext {
  /** Spaces that continue the current list item on a new line. */
  indent: string;
  /** Telegram forbids nested blockquotes, so inner ones are flattened. */
  inQuote: boolean;
  definitions: Map<string, Definition>;
}

/** Link schemes a Telegram client opens; anything else is shown as text. */
const SAFE_URL = /^(https?:\/\/|tg:\/\/|mailto:)/i;

/**
 * Markdown to Telegram HTML (parse_mode `HTML`).
 * @example markdownToTelegramHtml('**a** < b') // '<b>a</b> &lt; b'
 */
export function markdownToTelegramHtml(markdown: string): string {
  const tree = fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const definitions = new Map<string, Definition>();
  collectDefinitions(tree, definitions);
  return blocks(tree.children, { indent: '', inQuote: false, definitions }, '\n\n').trim();
}

function collectDefinitions(node: Nodes, into: Map<string, Definition>): void {
  if (node.type === 'definition') into.set(node.identifier, node);
  if ('children' in node) for (const child of node.children as Nodes[]) collectDefinitions(child, into);
}

/** Block nodes, each starting unindented and continuing at `ctx.indent`. */
function blocks(nodes: RootContent[], ctx: RenderContext, separator: string): string {
  return nodes
    .map((node) => block(node, ctx))
    .filter((html) => html.length > 0)
    .join(separator.replace(/\n$/, `\n${ctx.indent}`));
}

function block(node: RootContent, ctx: RenderContext): string {
  switch (node.type) {
    case 'paragraph':
      return inlines(node.children, ctx);
    case 'heading':
      return `<b>${inlines(node.children, ctx)}</b>`;
    case 'code':
      return codeBlock(node.value, node.lang);
    case 'list':
      return list(node, ctx);
    case 'blockquote':
      return blockquote(node, ctx);
    case 'table':
      return `<pre>${escapeHtml(tableAsText(node))}</pre>`;
    case 'thematicBreak':
      return '———';
    case 'html':
      return indented(escapeHtml(node.value), ctx);
    case 'footnoteDefinition':
      return `[^${escapeHtml(node.label ?? node.identifier)}]: ${blocks(node.children, ctx, '\n')}`;
    case 'definition':
      return '';
    default:
      return isPhrasing(node) ? inline(node, ctx) : '';
  }
}

function codeBlock(value: string, lang: string | null | undefined): string {
  const language = lang?.replace(/[^\w+#.-]/g, '');
  const body = escapeHtml(value);
  return language ? `<pre><code class="language-${language}">${body}</code></pre>` : `<pre>${body}</pre>`;
}

function list(node: List, ctx: RenderContext): string {
  const start = node.start ?? 1;
  const items = node.children.map((item, index) => listItem(item, node.ordered ? `${start + index}. ` : '• ', ctx));
  return items.join(node.spread ? `\n\n${ctx.indent}` : `\n${ctx.indent}`);
}

function listItem(item: ListItem, marker: string, ctx: RenderContext): string {
  const check = item.checked === true ? '☑ ' : item.checked === false ? '☐ ' : '';
  const inner = { ...ctx, indent: ctx.indent + ' '.repeat(marker.length) };
  return marker + check + blocks(item.children, inner, item.spread ? '\n\n' : '\n');
}

/**
 * One `<blockquote>` per run of text blocks; code blocks and tables are written
 * between runs because Telegram does not allow `<pre>` inside a quote.
 */
function blockquote(node: Blockquote, ctx: RenderContext): string {
  if (ctx.inQuote) return blocks(node.children, ctx, '\n');
  const inner = { ...ctx, inQuote: true };
  const segments: string[] = [];
  let run: RootContent[] = [];
  const flush = () => {
    const body = blocks(run, inner, '\n');
    if (body) segments.push(`<blockquote>${body}</blockquote>`);
    run = [];
  };
  for (const child of node.children) {
    if (child.type === 'code' || child.type === 'table') {
      flush();
      segments.push(block(child, inner));
    } else run.push(child);
  }
  flush();
  return segments.join(`\n${ctx.indent}`);
}

function isPhrasing(node: RootContent): node is PhrasingContent {
  return ['text', 'emphasis', 'strong', 'delete', 'inlineCode', 'break', 'link', 'linkReference', 'image', 'imageReference', 'footnoteReference', 'html'].includes(node.type);
}

function inlines(nodes: PhrasingContent[], ctx: RenderContext): string {
  return nodes.map((node) => inline(node, ctx)).join('');
}

function inline(node: PhrasingContent, ctx: RenderContext): string {
  switch (node.type) {
    case 'text':
    case 'html':
      return indented(escapeHtml(node.value), ctx);
    case 'strong':
      return `<b>${inlines(node.children, ctx)}</b>`;
    case 'emphasis':
      return `<i>${inlines(node.children, ctx)}</i>`;
    case 'delete':
      return `<s>${inlines(node.children, ctx)}</s>`;
    case 'inlineCode':
      return `<code>${escapeHtml(node.value)}</code>`;
    case 'break':
      return `\n${ctx.indent}`;
    case 'link':
      return link(node.url, inlines(node.children, ctx));
    case 'image':
      return link(node.url, escapeHtml(node.alt ?? ''));
    case 'linkReference':
      return link(ctx.definitions.get(node.identifier)?.url ?? '', inlines(node.children, ctx));
    case 'imageReference':
      return link(ctx.definitions.get(node.identifier)?.url ?? '', escapeHtml(node.alt ?? ''));
    case 'footnoteReference':
      return `[^${escapeHtml(node.label ?? node.identifier)}]`;
    default:
      return escapeHtml(plainTextOf(node as Nodes));
  }
}

/** A link Telegram can open, or just its label when the target is not a web, tg or mail link. */
function link(url: string, label: string): string {
  if (!SAFE_URL.test(url)) return label || escapeHtml(url);
  return `<a href="${escapeAttribute(url)}">${label || escapeHtml(url)}</a>`;
}

/** Continues a multi-line text at the current list indentation. */
function indented(html: string, ctx: RenderContext): string {
  return ctx.indent ? html.replace(/\n/g, `\n${ctx.indent}`) : html;
}
