/**
 * Images made ready for a model that sees: turned upright (EXIF orientation),
 * downscaled so that the long side is at most `maxPixels`, and re-encoded as
 * JPEG, or PNG when they have transparency. sharp is loaded with the first
 * image sent: a start, and a conversation without images, never load it.
 */

/** An image ready to send. */
export interface PreparedImage {
  bytes: Buffer;
  mimeType: 'image/jpeg' | 'image/png';
  width: number;
  height: number;
}

/** The largest image decoded, in pixels (about 100 megapixels): a larger one is refused, not decoded into memory. */
const MAX_INPUT_PIXELS = 100_000_000;

/** JPEG quality of a re-encoded photo: small, and a model reads it as well as the original. */
const JPEG_QUALITY = 85;

/** Types never decoded: an SVG is a document (scripts, links), not pixels. */
const NOT_DECODED = new Set(['image/svg+xml']);

/** Whether {@link downscaleImage} takes images of `mimeType`. */
export function canDownscale(mimeType: string): boolean {
  return mimeType.startsWith('image/') && !NOT_DECODED.has(mimeType);
}

/**
 * `input` upright, at most `maxPixels` on its long side (never enlarged), as
 * JPEG or, when it has transparency, PNG. An animation gives its first frame.
 *
 * @throws when the bytes are not an image sharp can decode, or it is larger than about 100 megapixels
 *
 * @example
 * const { bytes, mimeType } = await downscaleImage(photo, 1568);
 */
export async function downscaleImage(input: Uint8Array, maxPixels: number): Promise<PreparedImage> {
  const { default: sharp } = await import('sharp');
  const options = { limitInputPixels: MAX_INPUT_PIXELS, sequentialRead: true };
  const metadata = await sharp(input, options).metadata();
  // An alpha channel that is opaque everywhere (common in screenshots) makes no transparency.
  const transparent = metadata.hasAlpha === true && !(await sharp(input, options).stats()).isOpaque;
  const pipeline = sharp(input, options)
    .rotate()
    .resize({ width: maxPixels, height: maxPixels, fit: 'inside', withoutEnlargement: true });
  const encoded = transparent ? pipeline.png() : pipeline.flatten({ background: '#ffffff' }).jpeg({ quality: JPEG_QUALITY });
  const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
  return { bytes: data, mimeType: transparent ? 'image/png' : 'image/jpeg', width: info.width, height: info.height };
}
