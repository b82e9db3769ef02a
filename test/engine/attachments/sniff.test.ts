import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sniffType } from '../../../src/engine/attachments/sniff.js';

/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120)]);

describe('sniffType', () => {
  it('types text by its declared text type, else by its extension', async () => {
    expect(await sniffType(Buffer.from('# hi\n'), 'text/markdown', 'a.md')).toMatchObject({ kind: 'document', mimeType: 'text/markdown' });
    expect(await sniffType(Buffer.from('a,b\n1,2\n'), undefined, 'data.csv')).toMatchObject({ kind: 'document', mimeType: 'text/csv' });
    expect(await sniffType(Buffer.from('{"a":1}'), 'application/octet-stream', 'x.json')).toMatchObject({ kind: 'document', mimeType: 'application/json' });
    expect(await sniffType(Buffer.from('plain words'), undefined, 'README')).toMatchObject({ kind: 'document', mimeType: 'text/plain' });
  });

  it('types binary formats from their bytes, whatever the name says when nothing is declared', async () => {
    expect(await sniffType(PNG, 'image/png', 'cat.png')).toEqual({ kind: 'image', mimeType: 'image/png', ext: 'png', archive: false });
    expect(await sniffType(PNG, undefined, 'cat')).toMatchObject({ kind: 'image', ext: 'png' });
    expect(await sniffType(PDF, 'application/pdf', 'report.pdf')).toMatchObject({ kind: 'document', mimeType: 'application/pdf' });
  });

  it('marks archives as such, kind other', async () => {
    expect(await sniffType(gzipSync('x'), 'application/gzip', 'logs.gz')).toMatchObject({ kind: 'other', archive: true, mimeType: 'application/gzip' });
  });

  it('refuses bytes that are not what the type or the name claims', async () => {
    expect(await sniffType(Buffer.from('not a picture'), 'image/png', 'cat.png')).toEqual({ problem: 'mismatch', declared: 'image/png', found: 'text/plain' });
    expect(await sniffType(ELF, 'text/plain', 'notes.txt')).toMatchObject({ problem: 'mismatch', declared: 'text/plain' });
    expect(await sniffType(ELF, undefined, 'notes.txt')).toMatchObject({ problem: 'mismatch', declared: 'text/plain' });
    expect(await sniffType(gzipSync('x'), 'application/pdf', 'report.pdf')).toMatchObject({ problem: 'mismatch' });
  });

  it('takes audio in a video container and the reverse (one family)', async () => {
    const ogg = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('\x01vorbis'), Buffer.alloc(40)]);
    const sniffed = await sniffType(ogg, 'audio/ogg', 'voice.ogg');
    expect('problem' in sniffed).toBe(false);
  });

  it('refuses bytes of no known format that are not text', async () => {
    expect(await sniffType(Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 9]), undefined, 'blob')).toEqual({ problem: 'unknown' });
    expect(await sniffType(Buffer.from([0xc3, 0x28, 0x41]), 'text/plain', 'bad.txt')).toEqual({ problem: 'unknown' });
  });
});
