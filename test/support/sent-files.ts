/**
 * Files for the tests of `files_send`: a small valid PNG (an image every
 * platform shows as a photo) and its hash, as the fakes record what they received.
 */
import { createHash } from 'node:crypto';

/** A 1x1 PNG. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** SHA-256 of `bytes`, hex: what the fakes record of each upload. */
export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
