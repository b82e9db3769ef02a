/**
 * The scripted model behind the end-to-end runs:
 *
 * - "write a note": calls the built-in `files_write` with `{ path: "note.txt", content: "hi" }`;
 * - "fetch <url>": calls `http_fetch` on it;
 * - "stream please": a long plain answer, streamed slowly ({@link STREAMED_REPLY});
 * - after a tool result: "Done: <result>";
 * - anything else: "You said: <text>".
 */
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';

/** The fake model's scripted reply to a user text (what a user then reads). */
export function replyTo(text: string): string {
  return `You said: ${text}`;
}

/** The text of a message of the request (string or content parts). */
export function textOf(message: FakeLlmRequest['messages'][number]): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join('');
  return '';
}

/** The answer to "stream please": about 2.5 s of plain text, each sentence numbered. */
export const STREAMED_REPLY = Array.from({ length: 8 }, (_, i) => `Streamed sentence ${i + 1} of the answer.`).join(' ');

/** Answers one chat-completion request. */
export function respond(request: FakeLlmRequest): FakeLlmEntry {
  const messages = request.messages;
  const last = messages.at(-1);
  if (last?.role === 'tool') return textReply(`Done: ${textOf(last)}`);
  const user = [...messages].reverse().find((message) => message.role === 'user');
  // Group messages arrive attributed as "[Name] text"; mentions may lead the text.
  const text = (user ? textOf(user) : '').replace(/^\[[^\]]*\]\s*/, '').replace(/^(<@\w+>|@\w+)\s*/, '').trim();
  if (/write a note/i.test(text)) {
    return toolCallReply([{ name: 'files_write', arguments: { path: 'note.txt', content: 'hi' } }]);
  }
  const fetch = /^fetch (\S+)/i.exec(text);
  if (fetch) return toolCallReply([{ name: 'http_fetch', arguments: { url: fetch[1] } }]);
  if (/stream please/i.test(text)) return textReply(STREAMED_REPLY, { chunkSize: 16, chunkDelayMs: 100 });
  return textReply(replyTo(text));
}
