/**
 * Escaping for Telegram's HTML parse mode, which knows only `&lt;`, `&gt;`,
 * `&amp;` and `&quot;` (plus numeric entities). Every piece of text that is
 * not one of our own tags goes through here.
 */

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** Escapes text content: `&`, `<` and `>`. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (char) => TEXT_ESCAPES[char]!);
}

/** Escapes an attribute value (double-quoted): text escapes plus `"`. */
export function escapeAttribute(value: string): string {
  return escapeHtml(value).replace(/"/g, '&quot;');
}
