import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, openLogFile } from '../src/log.js';

const TOKEN = '7000001:AAF' + '0f1e2d3c4b5a69788796a5b4';

/** A logger with `TOKEN` configured, and the lines it wrote. */
function capture(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: createLogger({ level: 'debug', pretty: false, secrets: [TOKEN], destination }), lines };
}

describe('createLogger', () => {
  it('writes no beginning of a configured credential, in messages, fields or errors', () => {
    const { log, lines } = capture();
    log.info({ preview: `the token is ${TOKEN.slice(0, 15)} …` }, `partial ${TOKEN.slice(0, 9)}`);
    log.warn({ err: new Error(`call to /bot${TOKEN.slice(0, 20)} failed`) }, 'request failed');
    const text = lines.join('');
    expect(lines).toHaveLength(2);
    expect(text).not.toContain(TOKEN.slice(0, 8));
    expect(text).toContain('[redacted]');
    expect(text).toContain('request failed');
  });

  it('writes no percent-encoded or base64 form of a configured credential', () => {
    const { log, lines } = capture();
    log.debug({ url: `https://example.com/?t=${encodeURIComponent(TOKEN)}` }, 'fetch');
    log.debug({ header: `Basic ${Buffer.from(`bot:${TOKEN}`).toString('base64')}` }, 'auth');
    const text = lines.join('');
    expect(text).not.toContain(encodeURIComponent(TOKEN).slice(0, 8));
    expect(text).not.toContain(Buffer.from(TOKEN).toString('base64').slice(0, 8));
    expect(text).not.toContain(Buffer.from(`bot:${TOKEN}`).toString('base64').slice(8, 16));
  });
});

describe('openLogFile', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('makes the log folder 0700 and its files 0600 at every start, also when they were there before with wider modes', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pincer-log-'));
    dirs.push(dataDir);
    const folder = join(dataDir, 'logs');
    mkdirSync(folder);
    chmodSync(folder, 0o777);
    for (const name of ['pincer.log', 'pincer.log.1']) {
      writeFileSync(join(folder, name), 'an older line\n');
      chmodSync(join(folder, name), 0o644);
    }
    const file = openLogFile(dataDir);
    file.stream.end();
    expect(modeOf(folder)).toBe(0o700);
    expect(modeOf(file.path)).toBe(0o600);
    expect(modeOf(join(folder, 'pincer.log.1'))).toBe(0o600);
  });
});
