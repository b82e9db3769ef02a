/**
 * Slack mrkdwn as a person reads it: links shown by their text, mentions by
 * name, formatting markers and entity escapes gone. For assertions on what
 * the bot "said" without depending on its exact markup.
 */

/** The readable text of a mrkdwn string. */
export function readableText(mrkdwn: string): string {
  return mrkdwn
    .replace(/\u200b/g, '')
    .replace(/```\n?/g, '')
    .replace(/`/g, '')
    .replace(/<([^<>|]+)\|([^<>]+)>/g, '$2')
    .replace(/<([^<>]+)>/g, '$1')
    .replace(/(^|[\s(>])[*_~]+(?=\S)/g, '$1')
    .replace(/(\S)[*_~]+(?=$|[\s).,:;!?])/gm, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}

/** The text a message shows: its section blocks' text when it has blocks, else its `text`. */
export function messageText(message: { text: string; blocks?: unknown[] }): string {
  const sections = (message.blocks ?? [])
    .map((block) => block as { type?: string; text?: { text?: string } })
    .filter((block) => block.type === 'section' && block.text?.text)
    .map((block) => block.text!.text!);
  return sections.length ? sections.join('\n') : message.text;
}
