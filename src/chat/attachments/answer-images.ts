/**
 * Pictures an answer shows: an answer that embeds an image of the
 * conversation's workspace in Markdown (`![chart](charts/sales.png)`) gets
 * that picture sent after it, as a photo, through the same outlet and the
 * same delivered-once names as `files_send`. It asks nobody: the picture is
 * one the conversation's own workspace holds, which the model could already
 * read and describe here, and it goes nowhere but this conversation. Only
 * images the platform shows inline are sent (a document named in an answer is
 * not), at most {@link MAX_ANSWER_IMAGES}, within the workspace rules of
 * `files_read`; anything else stays as the text the model wrote.
 */
import type { AgentServices } from '../../engine/services.js';
import { readForSend } from '../../tools/builtin/files-send.js';
import { workspaceSettingsOf } from '../../tools/builtin/index.js';
import type { ToolContext } from '../../tools/types.js';

/** The most pictures one answer sends. */
export const MAX_ANSWER_IMAGES = 4;

/** `![alt](path)` or `![alt](<path with spaces>)`, optionally with a title. */
const EMBEDDED = /!\[[^\]\n]{0,200}\]\(\s{0,4}(?:<([^>\n]{1,512})>|([^)\s]{1,512}))(?:\s{1,4}"[^"\n]{0,200}")?\s{0,4}\)/g;

/** The workspace paths of the images an answer embeds, in order, without repeats (web and data addresses left out). */
export function embeddedImages(text: string): string[] {
  const paths: string[] = [];
  for (const match of text.matchAll(EMBEDDED)) {
    const path = (match[1] ?? match[2] ?? '').trim();
    if (!path || /^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//')) continue;
    const relative = path.replace(/^\.\//, '');
    if (!paths.includes(relative)) paths.push(relative);
    if (paths.length === MAX_ANSWER_IMAGES) break;
  }
  return paths;
}

/**
 * Sends the workspace images `text` embeds to the conversation of the turn
 * whose tool context `contextOf` gives (made only when there is an image to
 * send); what could not be sent is logged, never thrown.
 */
export async function sendAnswerImages(text: string, services: Pick<AgentServices, 'config' | 'log'>, contextOf: () => ToolContext): Promise<void> {
  if (!text.includes('![')) return;
  const paths = embeddedImages(text);
  if (!paths.length) return;
  const ctx = contextOf();
  const outlet = ctx.outlet;
  if (!outlet?.limits) return;
  const settings = workspaceSettingsOf(services.config);
  const { log } = services;
  for (const path of paths) {
    try {
      const { file, sha256 } = await readForSend(settings, { path }, ctx);
      if (file.as !== 'photo') continue;
      const sent = await outlet.send(file, `answer:${sha256.slice(0, 32)}`);
      if (!sent.ok) log.info({ thread: ctx.threadKey, reason: sent.reason }, 'an image named in an answer was not sent');
    } catch (error) {
      // Not in the workspace, missing, too big: the answer's text stands as written.
      log.debug({ thread: ctx.threadKey, reason: error instanceof Error ? error.message : 'unknown' }, 'an image named in an answer was not sent');
    }
  }
}
