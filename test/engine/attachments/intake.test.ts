import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AttachmentMeta, Channel, ChatInfo, FetchLimits, InboundMessage } from '../../../src/channels/types.js';
import { parseConfig } from '../../../src/config/load.js';
import type { ConfigInput } from '../../../src/config/schema.js';
import { DailyBytes } from '../../../src/engine/attachments/daily-bytes.js';
import { AttachmentIntake } from '../../../src/engine/attachments/intake.js';
import { AttachmentFetchError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';
import type { Namespace } from '../../../src/store/store.js';

const DM: ChatInfo = { channel: 'test', chatId: 'ada', kind: 'dm', scope: 'global' };

/** A namespace in memory. */
function memory<T>(values = new Map<string, T>()): Namespace<T> {
  return {
    get: async (key) => values.get(key),
    set: async (key, value) => void values.set(key, value),
    delete: async (key) => values.delete(key),
    entry: (key, value) => ({ namespace: 'memory', key, value: { v: 1, data: value } }),
    update: async (key, change) => {
      const next = change(values.get(key));
      if (next === undefined) values.delete(key);
      else values.set(key, next);
      return next;
    },
  };
}

/** An intake over a channel serving `files` (by name), with a fresh workspace folder. */
function setup(files: Record<string, Buffer | Error>, attachments: ConfigInput['attachments'] = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pincer-intake-'));
  const config = parseConfig({ dataDir, attachments });
  const fetched: string[] = [];
  const channel = {
    name: 'test',
    fetchAttachment: async (attachment: AttachmentMeta, limits: FetchLimits) => {
      fetched.push(attachment.name);
      const file = files[attachment.name];
      if (file instanceof Error) throw file;
      if (!file) throw new AttachmentFetchError('failed', 'gone');
      if (file.length > limits.maxBytes) throw new AttachmentFetchError('too-big', 'big', limits.maxBytes);
      return file;
    },
  } as unknown as Channel;
  const daily = new DailyBytes(memory<number>(), config.attachments.maxBytesPerUserPerDay);
  const intake = new AttachmentIntake({ config, channelOf: (name) => (name === 'test' ? channel : undefined), daily, log: silentLogger });
  const workspace = join(dataDir, 'workspace', 'users', 'test', 'ada');
  return { intake, fetched, workspace, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

function message(...attachments: AttachmentMeta[]): InboundMessage {
  return { type: 'message', chat: DM, sender: { id: 'ada', name: 'Ada' }, receivedAt: 1, messageId: '1', text: 'hi', mentionsBot: true, replyToBot: false, attachments };
}

const doc = (name: string, sizeBytes?: number): AttachmentMeta => ({ kind: 'document', name, mimeType: 'text/plain', ...(sizeBytes !== undefined ? { sizeBytes } : {}) });

describe('AttachmentIntake', () => {
  it("saves a message's files in the person's workspace, and refuses those past the message's total", async () => {
    const t = setup({ 'a.txt': Buffer.alloc(600, 'a'), 'b.txt': Buffer.alloc(600, 'b'), 'c.txt': Buffer.alloc(300, 'c') }, { maxBytesPerMessage: 1000 });
    const [a, b, c] = await t.intake.receive(DM, message(doc('a.txt', 600), doc('b.txt', 600), doc('c.txt')));
    expect(a).toMatchObject({ status: 'saved', saved: { path: 'attachments/a.txt', sizeBytes: 600, userId: 'test:ada', kind: 'document' } });
    expect(b).toMatchObject({ status: 'refused', reason: 'message-total', why: "would take this message's files past the limit of 1000 bytes" });
    expect(c).toMatchObject({ status: 'saved' });
    expect(readFileSync(join(t.workspace, 'attachments/a.txt'), 'utf8')).toBe('a'.repeat(600));
    // Refused on its declared size: never fetched.
    expect(t.fetched).toEqual(['a.txt', 'c.txt']);
    t.cleanup();
  });

  it('a file whose size was not declared is stopped at the limit while it downloads', async () => {
    const t = setup({ 'big.txt': Buffer.alloc(2048, 'x') }, { maxBytes: 1024 });
    const [big] = await t.intake.receive(DM, message(doc('big.txt')));
    expect(big).toMatchObject({ status: 'refused', reason: 'too-big', why: 'is over the limit of 1 KB per file' });
    t.cleanup();
  });

  it("books each person's day: past the daily budget a file is refused", async () => {
    const t = setup({ 'a.txt': Buffer.alloc(700, 'a'), 'b.txt': Buffer.alloc(700, 'b') }, { maxBytesPerUserPerDay: 1000 });
    expect((await t.intake.receive(DM, message(doc('a.txt', 700))))[0]).toMatchObject({ status: 'saved' });
    expect((await t.intake.receive(DM, message(doc('b.txt', 700))))[0]).toMatchObject({ status: 'refused', reason: 'daily', why: "would take you past today's limit of 1000 bytes of files" });
    t.cleanup();
  });

  it('a failed download, an unknown type and a channel that cannot fetch are each refused with a reason', async () => {
    const t = setup({ 'x.txt': new AttachmentFetchError('failed', 'the file server answered 404'), 'blob.bin': Buffer.from([0, 1, 2, 0xff]), 'odd.txt': new Error('https://secret.example/token') });
    const received = await t.intake.receive(DM, message(doc('x.txt'), { kind: 'other', name: 'blob.bin' }, doc('odd.txt')));
    expect(received).toEqual([
      { status: 'refused', name: 'x.txt', reason: 'failed', why: 'could not be downloaded: the file server answered 404' },
      { status: 'refused', name: 'blob.bin', reason: 'unknown-type', why: 'is of a type I cannot tell: neither text nor a file format I know' },
      // An error of another kind may carry a URL: only a plain reason is given.
      { status: 'refused', name: 'odd.txt', reason: 'failed', why: 'could not be downloaded' },
    ]);
    const elsewhere = await t.intake.receive({ ...DM, channel: 'gone' }, message(doc('x.txt')));
    expect(elsewhere[0]).toMatchObject({ status: 'refused', reason: 'failed', why: 'could not be downloaded: this channel cannot download files' });
    t.cleanup();
  });

  it('restore fetches again a saved file this instance does not have, by its reference', async () => {
    const t = setup({ 'a.txt': Buffer.from('hello') });
    const [received] = await t.intake.receive(DM, message(doc('a.txt')));
    if (received?.status !== 'saved') throw new Error('not saved');
    rmSync(join(t.workspace, 'attachments'), { recursive: true });
    await t.intake.restore(DM, [received.saved]);
    expect(readFileSync(join(t.workspace, received.saved.path), 'utf8')).toBe('hello');
    expect(t.fetched).toEqual(['a.txt', 'a.txt']);
    // Present: not fetched again.
    await t.intake.restore(DM, [received.saved]);
    expect(t.fetched).toHaveLength(2);
    expect(existsSync(join(t.workspace, 'attachments/a.txt'))).toBe(true);
    t.cleanup();
  });
});

describe('DailyBytes', () => {
  it("counts a person's bytes per UTC day, starts afresh the next day, and keeps no count of past days", async () => {
    const values = new Map<string, number>();
    let now = Date.UTC(2026, 10, 27, 23, 0);
    const daily = new DailyBytes(memory(values), 100, () => now);
    expect(await daily.book('test:ada', 60)).toBe(true);
    expect(await daily.book('test:ada', 60)).toBe(false);
    expect(await daily.remaining('test:ada')).toBe(40);
    now += 2 * 3_600_000;
    expect(await daily.remaining('test:ada')).toBe(100);
    expect(await daily.book('test:ada', 60)).toBe(true);
    expect([...values.keys()]).toEqual(['test:ada:2026-11-28']);
  });
});
