/**
 * The visible text of a markdown subtree, without any formatting, for places
 * where Telegram allows no markup (table cells inside `<pre>`, image alt text).
 */
import type { Nodes } from 'mdast';

/** Concatenated text of `node` and its descendants. */
export function plainTextOf(node: Nodes): string {
  if (node.type === 'text' || node.type === 'inlineCode' || node.type === 'code' || node.type === 'html') return node.value;
  if (node.type === 'break') return '\n';
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? '';
  if ('children' in node) return (node.children as Nodes[]).map(plainTextOf).join('');
  return '';
}
