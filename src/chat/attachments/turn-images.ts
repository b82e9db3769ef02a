/**
 * Images in the conversation as a request sends them (SPEC section 17). The
 * history keeps each image as a reference (its workspace path and type, see
 * `ImagePart`); for each model call the messages are copied with every image
 * either attached as a downscaled data URL (a model that sees, an image of the
 * latest `keepImages` turns, counted by the turn each image came in) or named
 * in one line saying why the model does not see it. Each image is read and
 * downscaled once per turn.
 */
import { basename } from 'node:path';
import { canDownscale, downscaleImage } from '../../engine/attachments/downscale.js';
import type { ReceivedAttachment } from '../../engine/attachments/received.js';
import { shownName } from '../../engine/attachments/received.js';
import type { ChatMessage, ImagePart } from '../../llm/types.js';
import type { Logger } from '../../log.js';

/** What the model reads instead of an image it is not shown, by reason. */
export const IMAGE_LINES = {
  /** The conversation's model does not see images. */
  blind: (name: string) => `[${name}: an image was sent, but you cannot see images: say so if asked about it]`,
  /** An image older than the latest `keepImages` turns. */
  earlier: (name: string) => `[${name}: an image from an earlier turn, no longer shown to you: ask for it again if you need to look at it]`,
  /** The file could be neither read nor fetched again, or is not an image that decodes. */
  unreadable: (name: string) => `[${name}: an image that could not be opened to show you: say so if asked about it]`,
} as const;

/** What decides how images are sent. */
export interface ImageSettings {
  /** The conversation's model sees images. */
  vision: boolean;
  /** The running turn (the thread's count of turns). */
  turn: number;
  /** Images of this many latest turns are sent (`attachments.keepImages`). */
  keepTurns: number;
  /** The longest side of an image sent, in pixels (`attachments.maxImagePixels`). */
  maxPixels: number;
}

/** The bytes of a saved image by its workspace path (fetched again when missing), or undefined when it cannot be had. */
export type ImageReader = (path: string) => Promise<Uint8Array | undefined>;

type UserMessage = Extract<ChatMessage, { role: 'user' }>;

/** The image parts of a message's files that came in turn `turn`: the saved images of a type that can be shown. */
export function imagePartsOf(received: readonly ReceivedAttachment[], turn: number): ImagePart[] {
  return received.flatMap((item) =>
    item.status === 'saved' && item.saved.kind === 'image' && canDownscale(item.saved.mimeType) ? [{ path: item.saved.path, mimeType: item.saved.mimeType, turn }] : [],
  );
}

/**
 * Whether an image is still sent: it came in one of the latest `keepTurns`
 * turns, the running one (`turn`) counted first.
 *
 * @example isRecent({ ...image, turn: 8 }, 10, 3) // true: turns 8, 9 and 10 keep their images
 */
export function isRecent(image: ImagePart, turn: number, keepTurns: number): boolean {
  return image.turn > turn - keepTurns;
}

/**
 * The images of one turn's requests. Copies are kept per message, so that the
 * same message sends the same object at every call of the turn (the provider
 * converts it once), and each image's data URL is made once.
 *
 * @example
 * const images = new TurnImages(read, { vision: true, keepTurns: 3, maxPixels: 1568 });
 * const sent = await images.forRequest(ctx.messages);
 */
export class TurnImages {
  private readonly dataUrls = new Map<string, Promise<string | undefined>>();
  private readonly copies = new WeakMap<ChatMessage, ChatMessage>();

  constructor(
    private readonly read: ImageReader,
    private readonly settings: ImageSettings,
    private readonly log?: Logger,
  ) {}

  /** `messages` as the request sends them; those without images are the very same objects. */
  forRequest(messages: readonly ChatMessage[]): Promise<ChatMessage[]> {
    return Promise.all(messages.map((message) => (message.role === 'user' && message.images?.length ? this.copyOf(message, message.images) : message)));
  }

  private async copyOf(message: UserMessage, images: readonly ImagePart[]): Promise<ChatMessage> {
    const kept = this.copies.get(message);
    if (kept) return kept;
    const copy = await this.withImages(message, images);
    this.copies.set(message, copy);
    return copy;
  }

  /** The message with each image's data URL attached, or a line for one that is not shown. */
  private async withImages(message: UserMessage, images: readonly ImagePart[]): Promise<ChatMessage> {
    const { vision, turn, keepTurns } = this.settings;
    const sent: ImagePart[] = [];
    const lines: string[] = [];
    for (const image of images) {
      if (!vision) lines.push(IMAGE_LINES.blind(nameOf(image)));
      else if (!isRecent(image, turn, keepTurns)) lines.push(IMAGE_LINES.earlier(nameOf(image)));
      else {
        const dataUrl = await this.dataUrlOf(image);
        if (dataUrl) sent.push({ ...image, dataUrl });
        else lines.push(IMAGE_LINES.unreadable(nameOf(image)));
      }
    }
    const copy = withLines(message, lines);
    return sent.length ? { ...copy, images: sent } : copy;
  }

  private dataUrlOf(image: ImagePart): Promise<string | undefined> {
    let made = this.dataUrls.get(image.path);
    if (!made) {
      made = this.make(image);
      this.dataUrls.set(image.path, made);
    }
    return made;
  }

  private async make(image: ImagePart): Promise<string | undefined> {
    try {
      const bytes = await this.read(image.path);
      if (!bytes) return undefined;
      const prepared = await downscaleImage(bytes, this.settings.maxPixels);
      return `data:${prepared.mimeType};base64,${prepared.bytes.toString('base64')}`;
    } catch (error) {
      this.log?.warn({ path: image.path, reason: error instanceof Error ? error.message : 'unknown error' }, 'an image could not be prepared for the model');
      return undefined;
    }
  }
}

/** A copy of `message` without images, with `lines` after its text. */
function withLines(message: UserMessage, lines: readonly string[]): UserMessage {
  const { images: _images, ...rest } = message;
  return lines.length ? { ...rest, content: [message.content, ...lines].filter(Boolean).join('\n') } : rest;
}

function nameOf(image: ImagePart): string {
  return shownName(basename(image.path));
}
