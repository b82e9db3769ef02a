/**
 * Slack message text to the plain text the agent reads: the bot's own
 * @mention removed, other mentions as `@name` / `#channel`, links as
 * `text (url)`, and Slack's `&amp;` `&lt;` `&gt;` escapes undone.
 */

const CONTROL = /<([^<>]+)>/g;

/**
 * Normalises a message's text.
 * @param nameOf resolves a user id to a display name (for `<@U…>` mentions)
 */
export async function plainTextFromSlack(
  text: string,
  botUserId: string,
  nameOf: (userId: string) => Promise<string>,
): Promise<string> {
  const sequences = [...text.matchAll(CONTROL)];
  const replacements = await Promise.all(sequences.map((match) => replaceControl(match[1]!, botUserId, nameOf)));
  let index = 0;
  const replaced = text.replace(CONTROL, () => replacements[index++] ?? '');
  return unescapeSlack(replaced)
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** Whether the text @mentions the bot. */
export function mentionsUser(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}

async function replaceControl(inner: string, botUserId: string, nameOf: (userId: string) => Promise<string>): Promise<string> {
  const [target = '', label] = splitLabel(inner);
  if (target.startsWith('@')) {
    const userId = target.slice(1);
    if (userId === botUserId) return '';
    return `@${label ?? (await nameOf(userId))}`;
  }
  if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
  if (target.startsWith('!')) return specialMention(target.slice(1), label);
  return link(target, label);
}

function splitLabel(inner: string): [string, string | undefined] {
  const bar = inner.indexOf('|');
  if (bar < 0) return [inner, undefined];
  return [inner.slice(0, bar), inner.slice(bar + 1)];
}

/** `<!here>`, `<!channel>`, `<!subteam^ID|@team>`, `<!date^…|fallback>`. */
function specialMention(command: string, label: string | undefined): string {
  if (label) return label.startsWith('@') || command.startsWith('date') ? label : `@${label}`;
  return `@${command.split('^')[0]}`;
}

function link(url: string, label: string | undefined): string {
  const shown = url.replace(/^mailto:/i, '');
  if (!label || label === url || label === shown) return shown;
  return `${label} (${shown})`;
}

function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
