/**
 * Telegram's HTML parse mode as the fake Bot API server applies it: only the
 * tags Telegram supports, every start tag closed in order, and `<` / `&` only
 * as markup or entities. It is a little stricter than Telegram about a bare
 * `&` (Telegram keeps it as text), so a missed escape shows up in tests.
 */

const SUPPORTED_TAGS = new Set([
  'b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'tg-emoji', 'code', 'pre', 'blockquote',
]);

const TAG = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*>/;
const ENTITY = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/** The result of parsing one message text. */
export type HtmlParse = { ok: true; text: string; tags: string[] } | { ok: false; error: string };

/** Parses `html`: the visible text, the tags used, or Telegram's error wording. */
export function parseTelegramHtml(html: string): HtmlParse {
  const stack: string[] = [];
  const tags: string[] = [];
  let text = '';
  let i = 0;
  while (i < html.length) {
    const rest = html.slice(i);
    if (html[i] === '<') {
      const tag = TAG.exec(rest);
      if (!tag) return fail(`Unexpected character at byte offset ${i}`);
      const [whole, closing, rawName] = tag;
      const name = rawName!.toLowerCase();
      if (closing) {
        if (stack.pop() !== name) return fail(`Unmatched end tag at byte offset ${i}, expected "</${stack.at(-1) ?? ''}>", found "</${name}>"`);
      } else {
        if (!SUPPORTED_TAGS.has(name)) return fail(`Unsupported start tag "${name}" at byte offset ${i}`);
        stack.push(name);
        tags.push(name);
      }
      i += whole.length;
    } else if (html[i] === '&') {
      const entity = ENTITY.exec(rest);
      if (!entity) return fail(`Character entity expected at byte offset ${i}`);
      text += decodeEntity(entity[1]!);
      i += entity[0].length;
    } else {
      text += html[i];
      i++;
    }
  }
  if (stack.length) return fail(`Can't find end tag corresponding to start tag "${stack.at(-1)}"`);
  return { ok: true, text, tags };
}

function decodeEntity(name: string): string {
  if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
  if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
  return NAMED[name]!;
}

function fail(detail: string): HtmlParse {
  return { ok: false, error: `Bad Request: can't parse entities: ${detail}` };
}
