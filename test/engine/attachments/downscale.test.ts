import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { canDownscale, downscaleImage } from '../../../src/engine/attachments/downscale.js';

/** A `width` x `height` picture: opaque, or with a transparent half. */
function picture(width: number, height: number, options: { transparent?: boolean; format?: 'png' | 'jpeg' | 'webp' } = {}): Promise<Buffer> {
  const channels = options.transparent ? 4 : 3;
  const raw = Buffer.alloc(width * height * channels);
  for (let i = 0; i < width * height; i++) {
    raw[i * channels] = (i % width) % 256;
    raw[i * channels + 1] = 120;
    raw[i * channels + 2] = 200;
    if (channels === 4) raw[i * channels + 3] = i % width < width / 2 ? 0 : 255;
  }
  const image = sharp(raw, { raw: { width, height, channels } });
  const format = options.format ?? (options.transparent ? 'png' : 'jpeg');
  return (format === 'png' ? image.png() : format === 'webp' ? image.webp() : image.jpeg()).toBuffer();
}

describe('downscaleImage', () => {
  it('brings a large photo to the long side asked, keeping its proportions, as JPEG', async () => {
    const prepared = await downscaleImage(await picture(3000, 2000), 1568);
    expect(prepared).toMatchObject({ mimeType: 'image/jpeg', width: 1568, height: 1045 });
    const decoded = await sharp(prepared.bytes).metadata();
    expect([decoded.format, decoded.width, decoded.height]).toEqual(['jpeg', 1568, 1045]);
  });

  it('never enlarges a small image', async () => {
    const prepared = await downscaleImage(await picture(300, 200, { format: 'webp' }), 1568);
    expect([prepared.mimeType, prepared.width, prepared.height]).toEqual(['image/jpeg', 300, 200]);
  });

  it('keeps transparency as PNG, and makes an opaque PNG a JPEG', async () => {
    const clear = await downscaleImage(await picture(2000, 1000, { transparent: true }), 1000);
    expect([clear.mimeType, clear.width, clear.height]).toEqual(['image/png', 1000, 500]);
    expect((await sharp(clear.bytes).stats()).isOpaque).toBe(false);
    const opaque = await downscaleImage(await picture(400, 400, { format: 'png' }), 1000);
    expect(opaque.mimeType).toBe('image/jpeg');
  });

  it('turns a photo upright by its EXIF orientation', async () => {
    // Stored 400 wide and 200 high, to be shown turned a quarter (orientation 6): 200 wide, 400 high.
    const sideways = await sharp(await picture(400, 200)).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const prepared = await downscaleImage(sideways, 1568);
    expect([prepared.width, prepared.height]).toEqual([200, 400]);
    expect((await sharp(prepared.bytes).metadata()).orientation).toBeUndefined();
  });

  it('sends no metadata of the original (EXIF, a position among it)', async () => {
    const tagged = await sharp(await picture(400, 200)).withExif({ IFD0: { Artist: 'Ada', ImageDescription: 'at home' } }).jpeg().toBuffer();
    expect((await sharp(tagged).metadata()).exif).toBeDefined();
    const prepared = await downscaleImage(tagged, 1568);
    expect((await sharp(prepared.bytes).metadata()).exif).toBeUndefined();
    expect(prepared.bytes.includes(Buffer.from('at home'))).toBe(false);
  });

  it('refuses bytes that are no image', async () => {
    await expect(downscaleImage(Buffer.from('not a picture at all'), 1568)).rejects.toThrow();
  });

  it('takes raster images, not SVG drawings', () => {
    expect(canDownscale('image/jpeg')).toBe(true);
    expect(canDownscale('image/webp')).toBe(true);
    expect(canDownscale('image/svg+xml')).toBe(false);
    expect(canDownscale('application/pdf')).toBe(false);
  });
});
