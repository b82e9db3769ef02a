/**
 * pincer's version, read from its package.json (next to `src/` and
 * `dist/`).
 */
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };

/** The version in package.json. */
export const PINCER_VERSION = manifest.version ?? '0.0.0';
