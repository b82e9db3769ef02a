/**
 * Files at rest: the data folder is 0700 and the SQLite files 0600, whatever
 * the umask; an existing folder or database readable by others is tightened.
 * The umask is opened wide (0) while these run, so a mode that merely relied
 * on the usual 022 would show up as group- or world-readable.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Logger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';

const root = mkdtempSync(join(tmpdir(), 'pincer-at-rest-'));
let previousUmask: number;
beforeAll(() => {
  previousUmask = process.umask(0);
});
afterAll(() => {
  process.umask(previousUmask);
  rmSync(root, { recursive: true, force: true });
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

function capturingLogger(): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = pino({ level: 'info' }, sink);
  return { log, lines: () => chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('files at rest', () => {
  it('creates the data folder 0700 and the database, its -wal and -shm files 0600', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const store = await Store.open({ dataDir });
    await store.namespace('notes', z.string()).set('a', 'private words');
    const db = join(dataDir, 'pincer.sqlite');
    expect(modeOf(dataDir).toString(8)).toBe('700');
    expect(modeOf(db).toString(8)).toBe('600');
    for (const companion of ['-wal', '-shm']) {
      expect(existsSync(db + companion), `${companion} exists while the store is open`).toBe(true);
      expect(modeOf(db + companion).toString(8), companion).toBe('600');
    }
    await store.close();
  });

  it('tightens an existing data folder and database readable by others, and says so', async () => {
    const dataDir = join(root, 'loose');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'pincer.sqlite'), '');
    chmodSync(join(dataDir, 'pincer.sqlite'), 0o644);
    const { log, lines } = capturingLogger();
    const store = await Store.open({ dataDir, log });
    await store.namespace('notes', z.string()).set('a', 'b');
    expect(modeOf(dataDir).toString(8)).toBe('700');
    expect(modeOf(join(dataDir, 'pincer.sqlite')).toString(8)).toBe('600');
    const told = lines().filter((line) => String(line.msg).includes('restricted the permissions'));
    expect(told.map((line) => line.path)).toEqual([dataDir, join(dataDir, 'pincer.sqlite')]);
    await store.close();
  });
});
