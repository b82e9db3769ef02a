/**
 * The images a chat-completion request carries, as a model that sees would
 * take them: each `image_url` part of a user message, its `data:` URL decoded.
 * Tests read their bytes (and decode them) to check what reached the model.
 */

/** One image part a request carried. */
export interface FakeImage {
  /** The request's index (0-based, as counted by the fake). */
  request: number;
  /** The index of the message that carried it. */
  message: number;
  /** The type the data URL declares. */
  mimeType: string;
  /** The decoded bytes; empty when the URL was not a base64 data URL. */
  bytes: Buffer;
  /** The URL itself when it is not a data URL (a remote image). */
  url?: string;
}

type Messages = Array<Record<string, unknown> & { role: string }>;

/** The image parts of a request's messages, in order. */
export function imagesIn(messages: Messages | undefined, request: number): FakeImage[] {
  const found: FakeImage[] = [];
  (messages ?? []).forEach((message, index) => {
    if (!Array.isArray(message.content)) return;
    for (const part of message.content as Array<{ type?: string; image_url?: { url?: string } }>) {
      if (part.type !== 'image_url') continue;
      const url = part.image_url?.url ?? '';
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      found.push(data ? { request, message: index, mimeType: data[1]!, bytes: Buffer.from(data[2]!, 'base64') } : { request, message: index, mimeType: '', bytes: Buffer.alloc(0), url });
    }
  });
  return found;
}

/** The text of a message's content: a string, or its text parts joined by line breaks (image parts left out). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? '' : String(content);
  return (content as Array<{ type?: string; text?: string }>)
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('\n');
}
