import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { IMAGE_LINES, imagePartsOf, isRecent, TurnImages, type ImageSettings } from '../../../src/chat/attachments/turn-images.js';
import { ChatMessageSchema } from '../../../src/engine/thread-record.js';
import { estimateTokens } from '../../../src/engine/compaction.js';
import { IMAGE_TOKEN_ESTIMATE, type ChatMessage } from '../../../src/llm/types.js';
import { toWireMessage } from '../../../src/llm/wire.js';

const photo = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#3080c0' } }).jpeg().toBuffer();

/** A user message with one image that came in turn `turn`, as the history keeps it. */
const withImage = (text: string, path: string, turn = 1): ChatMessage => ({ role: 'user', content: `${text}\n[attached: ${path.split('/').pop()} (image, image/jpeg, 10 KB), saved in the workspace as ${path}]`, images: [{ path, mimeType: 'image/jpeg', turn }] });
const answer = (text: string): ChatMessage => ({ role: 'assistant', content: text });

/** A reader of generated images, counting reads. */
function reader(files: Record<string, Buffer>) {
  const reads: string[] = [];
  return { reads, read: async (path: string) => (reads.push(path), files[path]) };
}

const vision: ImageSettings = { vision: true, turn: 1, keepTurns: 3, maxPixels: 1568 };

describe('the images of a request', () => {
  it('attaches an image, downscaled, for a model that sees: text first, then the image part', async () => {
    const { read } = reader({ 'attachments/photo.jpg': await photo(3000, 2000) });
    const history = [withImage('what is this?', 'attachments/photo.jpg')];
    const [sent] = await new TurnImages(read, vision).forRequest(history);
    const wire = toWireMessage(sent!);
    expect(wire.role).toBe('user');
    const parts = wire.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
    expect(parts.map((part) => part.type)).toEqual(['text', 'image_url']);
    expect(parts[0]!.text).toMatch(/^what is this\?/);
    const url = parts[1]!.image_url!.url;
    expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
    const decoded = await sharp(Buffer.from(url.split(',')[1]!, 'base64')).metadata();
    expect([decoded.width, decoded.height]).toEqual([1568, 1045]);
    // The history keeps the reference only: the stored message holds no bytes.
    expect(JSON.stringify(history)).not.toContain('base64');
  });

  it('tells a model that does not see in one line, and reads no file', async () => {
    const { read, reads } = reader({});
    const [sent] = await new TurnImages(read, { ...vision, vision: false }).forRequest([withImage('what is this?', 'attachments/photo.jpg')]);
    expect(toWireMessage(sent!).content).toBe(`what is this?\n[attached: photo.jpg (image, image/jpeg, 10 KB), saved in the workspace as attachments/photo.jpg]\n${IMAGE_LINES.blind('photo.jpg')}`);
    expect(reads).toEqual([]);
  });

  it('sends the images of the latest keepImages turns only; older ones become a line', async () => {
    const files: Record<string, Buffer> = {};
    for (const n of [1, 2, 3, 4]) files[`attachments/p${n}.jpg`] = await photo(100, 100);
    const { read, reads } = reader(files);
    const history: ChatMessage[] = [
      withImage('one', 'attachments/p1.jpg', 1), answer('a1'),
      withImage('two', 'attachments/p2.jpg', 2), answer('a2'),
      withImage('three', 'attachments/p3.jpg', 3), answer('a3'),
      withImage('four', 'attachments/p4.jpg', 4),
      // A nudge of the loop in the running turn, after an answer it wrote: still turn 4.
      answer('I will look'), { role: 'user', content: 'Your previous reply said you would act; do it now.' },
    ];
    const sent = await new TurnImages(read, { ...vision, turn: 4, keepTurns: 2 }).forRequest(history);
    const shown = sent.map((message) => (message.role === 'user' ? (message.images?.length ?? 0) : undefined));
    expect(shown).toEqual([0, undefined, 0, undefined, 1, undefined, 1, undefined, 0]);
    expect(sent[0]!.content).toContain(IMAGE_LINES.earlier('p1.jpg'));
    expect(reads.sort()).toEqual(['attachments/p3.jpg', 'attachments/p4.jpg']);
  });

  it('keeps the images of the running turn and the turns before it, as many as keepImages', () => {
    const image = { path: 'attachments/a.jpg', mimeType: 'image/jpeg', turn: 8 };
    expect([isRecent(image, 8, 1), isRecent(image, 9, 1), isRecent(image, 10, 3), isRecent(image, 11, 3)]).toEqual([true, false, true, false]);
  });

  it('prepares each image once per turn and sends the same message object at every call', async () => {
    const { read, reads } = reader({ 'attachments/photo.jpg': await photo(200, 200) });
    const images = new TurnImages(read, vision);
    const history = [withImage('look', 'attachments/photo.jpg')];
    const first = await images.forRequest(history);
    const second = await images.forRequest([...history, { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'calculator', arguments: '{}' }] }, { role: 'tool', toolCallId: 'c1', content: '2' }]);
    expect(second[0]).toBe(first[0]);
    expect(reads).toEqual(['attachments/photo.jpg']);
  });

  it('names an image that cannot be read instead of failing the request', async () => {
    const { read } = reader({ 'attachments/broken.jpg': Buffer.from('not a picture') });
    const sent = await new TurnImages(read, vision).forRequest([withImage('look', 'attachments/gone.jpg'), withImage('and this', 'attachments/broken.jpg')]);
    expect(sent[0]!.content).toContain(IMAGE_LINES.unreadable('gone.jpg'));
    expect(sent[1]!.content).toContain(IMAGE_LINES.unreadable('broken.jpg'));
    expect(typeof toWireMessage(sent[1]!).content).toBe('string');
  });

  it('counts an image sent as a fixed estimate of tokens, and one not sent as its line', async () => {
    const { read } = reader({ 'attachments/photo.jpg': await photo(100, 100) });
    const history = [withImage('look', 'attachments/photo.jpg')];
    const seen = await new TurnImages(read, vision).forRequest(history);
    const blind = await new TurnImages(read, { ...vision, vision: false }).forRequest(history);
    expect(estimateTokens(seen) - estimateTokens(history)).toBe(IMAGE_TOKEN_ESTIMATE);
    expect(estimateTokens(blind)).toBeLessThan(estimateTokens(history) + 100);
  });

  it('stores an image as its path and type: a data URL is never read back', () => {
    const stored = ChatMessageSchema.parse({ role: 'user', content: 'look', images: [{ path: 'attachments/photo.jpg', mimeType: 'image/jpeg', turn: 2, dataUrl: 'data:image/jpeg;base64,AAAA' }] });
    expect(stored).toEqual({ role: 'user', content: 'look', images: [{ path: 'attachments/photo.jpg', mimeType: 'image/jpeg', turn: 2 }] });
  });

  it('takes the saved images of a message, not other files or refused ones', () => {
    const saved = (path: string, kind: 'image' | 'document', mimeType: string) =>
      ({ status: 'saved', saved: { source: { kind, name: path }, path, userId: 'test:1', kind, mimeType, sizeBytes: 1, sha256: '' } }) as const;
    expect(
      imagePartsOf([
        saved('attachments/a.png', 'image', 'image/png'),
        saved('attachments/b.md', 'document', 'text/markdown'),
        saved('attachments/c.svg', 'image', 'image/svg+xml'),
        { status: 'refused', name: 'd.jpg', reason: 'too-big', why: 'is too big' },
      ], 5),
    ).toEqual([{ path: 'attachments/a.png', mimeType: 'image/png', turn: 5 }]);
  });
});
