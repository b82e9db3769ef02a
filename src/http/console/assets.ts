/**
 * The console's static files: the script and stylesheet bundled ahead of time
 * by `npm run build` (scripts/console-build.mjs) under content-hashed names,
 * named in their folder's manifest.json. Read once and kept in memory with
 * their gzip; served with a year of caching (a new build has new names), so a
 * page after the first costs no asset download.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { SECURITY_HEADERS } from './pages.js';

const ManifestSchema = z.object({ script: z.string(), css: z.string() });
/** The bundle's entry files. */
export type Manifest = z.infer<typeof ManifestSchema>;

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

/** The bundled files of one folder. */
export class ConsoleAssets {
  private readonly files = new Map<string, Asset>();
  readonly manifest: Manifest;

  /** @throws when the folder holds no build (run `npm run build`) */
  constructor(dir: string) {
    this.manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
    for (const name of readdirSync(dir)) {
      const type = TYPES[name.slice(name.lastIndexOf('.'))];
      if (!type || name.endsWith('.map')) continue;
      const body = readFileSync(join(dir, name));
      this.files.set(name, { type, body, gzip: gzipSync(body, { level: 9 }) });
    }
  }

  /** Serves `/console/assets/NAME`; false when there is no such file. */
  serve(name: string, request: IncomingMessage, response: ServerResponse): boolean {
    const asset = this.files.get(name);
    if (!asset) return false;
    const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzip : asset.body;
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': asset.type,
      'content-length': body.length,
      'cache-control': 'public, max-age=31536000, immutable',
      vary: 'accept-encoding',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    response.end(request.method === 'HEAD' ? undefined : body);
    return true;
  }
}
