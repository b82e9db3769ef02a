/**
 * The approval book on a real SQLite file: every state change is read back
 * through a freshly opened store, as a restarted process would see it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalBook, pressRefusal, type ApprovalPress, type PendingApproval } from '../../src/engine/approval-book.js';
import { decodeApprovalPayload, encodeApprovalPayload } from '../../src/channels/approval-payload.js';
import { Store } from '../../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'pincer-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;
const TEN_MINUTES = 600_000;
const THREAD = 'telegram:42';
const REQUESTER = 'telegram:7';
/** The conversation every test approval was asked in. */
const CHAT = { channel: 'telegram', chatId: '42' };

let fileCount = 0;
let url = '';
const open: Store[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((store) => store.close()));
});

/** A new database file for the test. */
function freshFile(): void {
  fileCount += 1;
  url = `sqlite://${join(dir, `approvals-${fileCount}.sqlite`)}`;
}

async function openStore(): Promise<Store> {
  const store = await Store.open({ url });
  open.push(store);
  return store;
}

async function closeStore(store: Store): Promise<void> {
  open.splice(open.indexOf(store), 1);
  await store.close();
}

/** Closes `store` and opens the same file again, as after a restart. */
async function reopen(store: Store, now: () => number = () => T0): Promise<{ store: Store; book: ApprovalBook }> {
  await closeStore(store);
  const again = await openStore();
  return { store: again, book: new ApprovalBook(again, now) };
}

async function start(now: () => number = () => T0): Promise<{ store: Store; book: ApprovalBook }> {
  freshFile();
  const store = await openStore();
  return { store, book: new ApprovalBook(store, now) };
}

/** A press of `action` by `userId`, in `chat` (by default the approval's own). */
function press(userId: string, action: ApprovalPress['action'], name: string, chat: ApprovalPress['chat'] = CHAT): ApprovalPress {
  return { userId, name, chat, action };
}

function approval(overrides: Partial<PendingApproval> = {}): PendingApproval {
  return {
    id: ApprovalBook.newId(),
    kind: 'tool',
    threadKey: THREAD,
    chat: { ...CHAT, kind: 'dm', scope: 'telegram' },
    requester: { id: '7', name: 'Alice' },
    userId: REQUESTER,
    call: { id: 'call_1', name: 'write_file', arguments: '{"path":"notes.txt","content":"hi"}' },
    summary: 'Write notes.txt',
    displayArgs: '{"path":"notes.txt"}',
    allowAlways: true,
    deferred: [],
    createdAt: T0,
    expiresAt: T0 + TEN_MINUTES,
    status: 'pending',
    ...overrides,
  };
}

describe('ApprovalBook: create', () => {
  it('finds a new approval after a restart, for its thread and among all pending', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);

    const { book } = await reopen(first.store);

    expect(await book.pendingFor(THREAD)).toEqual(pending);
    expect(await book.allPending()).toEqual([pending]);
    expect(await book.get(pending.id)).toEqual(pending);
    expect(await book.pendingFor('telegram:other')).toBeUndefined();
  });

  it('keeps every open approval of several threads', async () => {
    const first = await start();
    const a = approval({ threadKey: 'telegram:1' });
    const b = approval({ threadKey: 'discord:2' });
    await first.book.create(a);
    await first.book.create(b);

    const { book } = await reopen(first.store);

    expect((await book.allPending()).map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
    expect((await book.pendingFor('discord:2'))?.id).toBe(b.id);
  });
});

describe('ApprovalBook: answer', () => {
  it('persists an approval by its requester and closes it', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);

    const result = await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'));
    expect(result.ok).toBe(true);

    const { book } = await reopen(first.store);
    const stored = await book.get(pending.id);
    expect(stored).toMatchObject({ status: 'approved', decidedBy: 'Alice', decidedAt: T0 });
    expect(await book.pendingFor(THREAD)).toBeUndefined();
    expect(await book.allPending()).toEqual([]);
  });

  it('refuses an answer from someone else and leaves the approval waiting', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);

    const result = await first.book.answer(pending.id, press('telegram:666', 'approve', 'Mallory'));
    expect(result).toMatchObject({ ok: false, reason: 'not_requester' });

    const { book } = await reopen(first.store);
    expect(await book.pendingFor(THREAD)).toEqual(pending);
    expect(await book.allPending()).toEqual([pending]);
    // The requester can still answer.
    expect((await book.answer(pending.id, press(REQUESTER, 'deny', 'Alice'))).ok).toBe(true);
  });

  it.each([
    ['another chat', { channel: 'telegram', chatId: '43' }],
    ['a topic of the same chat', { channel: 'telegram', chatId: '42', subId: '5' }],
    ['the same chat id on another channel', { channel: 'discord', chatId: '42' }],
  ])('refuses the requester\'s press from %s, telling nothing, and leaves the approval waiting', async (_where, elsewhere) => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);

    const result = await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice', elsewhere));
    expect(result).toEqual({ ok: false, reason: 'wrong_chat' });

    const { book } = await reopen(first.store);
    expect(await book.pendingFor(THREAD)).toEqual(pending);
    // The same press in the approval's own chat still answers it.
    expect((await book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).ok).toBe(true);
  });

  it('refuses a press from another chat even after expiry, without ending the approval', async () => {
    const pending = approval();
    const first = await start(() => pending.expiresAt + 1);
    await first.book.create(pending);

    expect(await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice', { channel: 'telegram', chatId: '43' }))).toEqual({ ok: false, reason: 'wrong_chat' });
    const { book } = await reopen(first.store);
    expect((await book.get(pending.id))?.status).toBe('pending');
  });

  it('uses an answer once: a second one is already_answered and changes nothing', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'));

    const second = await reopen(first.store);
    const again = await second.book.answer(pending.id, press(REQUESTER, 'deny', 'Alice'));
    expect(again).toMatchObject({ ok: false, reason: 'already_answered' });

    const { book } = await reopen(second.store);
    expect((await book.get(pending.id))?.status).toBe('approved');
  });

  it('records a deny as denied', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    await first.book.answer(pending.id, press(REQUESTER, 'deny', 'Alice'));

    const { book } = await reopen(first.store);
    expect((await book.get(pending.id))?.status).toBe('denied');
    expect(await book.pendingFor(THREAD)).toBeUndefined();
  });

  it.each([
    [false, 'approved'],
    [true, 'always'],
  ] as const)('answers "always" with allowAlways %s as %s', async (allowAlways, status) => {
    const first = await start();
    const pending = approval({ allowAlways });
    await first.book.create(pending);

    const result = await first.book.answer(pending.id, press(REQUESTER, 'always', 'Alice'));
    expect(result.ok && result.approval.status).toBe(status);

    const { book } = await reopen(first.store);
    expect((await book.get(pending.id))?.status).toBe(status);
  });

  it('treats an answer after expiry as expired, and persists that', async () => {
    let clock = T0;
    const first = await start(() => clock);
    const pending = approval();
    await first.book.create(pending);

    clock = pending.expiresAt;
    const result = await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'));
    expect(result).toMatchObject({ ok: false, reason: 'expired' });

    const { book } = await reopen(first.store, () => clock);
    expect(await book.get(pending.id)).toMatchObject({ status: 'expired', decidedAt: pending.expiresAt });
    expect(await book.pendingFor(THREAD)).toBeUndefined();
    expect(await book.allPending()).toEqual([]);
    expect(await book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('accepts an answer one millisecond before expiry', async () => {
    const pending = approval();
    const { book } = await start(() => pending.expiresAt - 1);
    await book.create(pending);
    expect((await book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).ok).toBe(true);
  });

  it('answers unknown for an id it never saw', async () => {
    const { book } = await start();
    expect(await book.answer('nope', press(REQUESTER, 'approve', 'Alice'))).toEqual({ ok: false, reason: 'unknown' });
  });

  it('lets exactly one of two simultaneous answers win', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);

    const results = await Promise.all([
      first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice')),
      first.book.answer(pending.id, press(REQUESTER, 'deny', 'Alice')),
    ]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.find((r) => !r.ok)).toMatchObject({ reason: 'already_answered' });

    const winner = results.find((r) => r.ok)!;
    const { book } = await reopen(first.store);
    expect((await book.get(pending.id))?.status).toBe(winner.approval!.status);
  });
});

describe('pressRefusal', () => {
  const pending = approval({ chat: { channel: 'slack', chatId: 'C1', subId: '1700.1', kind: 'group', scope: 'slack:team:T1' }, userId: 'slack:U1' });
  const here = { channel: 'slack', chatId: 'C1', subId: '1700.1' };

  it.each([
    ['the requester, here', 'slack:U1', here, undefined],
    ['someone else, here', 'slack:U2', here, 'not_requester'],
    ['the requester, in the channel outside the thread', 'slack:U1', { channel: 'slack', chatId: 'C1' }, 'wrong_chat'],
    ['the requester, in another thread', 'slack:U1', { ...here, subId: '1700.2' }, 'wrong_chat'],
    ['the requester, in another channel', 'slack:U1', { ...here, chatId: 'C2' }, 'wrong_chat'],
    ['someone else, elsewhere', 'slack:U2', { ...here, chatId: 'C2' }, 'wrong_chat'],
  ] as const)('%s', (_who, userId, chat, expected) => {
    expect(pressRefusal(pending, { userId, chat })).toBe(expected);
  });
});

describe('ApprovalBook: end', () => {
  it.each(['cancelled', 'expired', 'denied'] as const)('persists an approval ended as %s', async (status) => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);

    const ended = await first.book.end(pending.id, status, 'system');
    expect(ended).toMatchObject({ status, decidedBy: 'system' });

    const { book } = await reopen(first.store);
    expect(await book.get(pending.id)).toMatchObject({ status, decidedAt: T0 });
    expect(await book.pendingFor(THREAD)).toBeUndefined();
    expect(await book.allPending()).toEqual([]);
  });

  it('returns undefined for an approval already ended or answered, and changes nothing', async () => {
    const first = await start();
    const cancelled = approval({ threadKey: 'telegram:1' });
    const approved = approval({ threadKey: 'telegram:2' });
    await first.book.create(cancelled);
    await first.book.create(approved);
    await first.book.end(cancelled.id, 'cancelled');
    await first.book.answer(approved.id, press(REQUESTER, 'approve', 'Alice'));

    const second = await reopen(first.store);
    expect(await second.book.end(cancelled.id, 'denied')).toBeUndefined();
    expect(await second.book.end(approved.id, 'expired')).toBeUndefined();
    expect(await second.book.end('never-created', 'expired')).toBeUndefined();

    const { book } = await reopen(second.store);
    expect((await book.get(cancelled.id))?.status).toBe('cancelled');
    expect((await book.get(approved.id))?.status).toBe('approved');
  });

  it('keeps a newer approval of the same thread when an older one ends', async () => {
    const first = await start();
    const older = approval();
    const newer = approval();
    await first.book.create(older);
    await first.book.create(newer);
    await first.book.end(older.id, 'cancelled');

    const { book } = await reopen(first.store);
    expect((await book.pendingFor(THREAD))?.id).toBe(newer.id);
  });
});

describe('ApprovalBook.newId', () => {
  it('makes distinct url-safe ids that fit a Telegram callback_data with prefix and action', () => {
    const ids = Array.from({ length: 2000 }, () => ApprovalBook.newId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      for (const action of ['approve', 'always', 'deny'] as const) {
        const payload = encodeApprovalPayload(id, action);
        expect(Buffer.byteLength(payload, 'utf8')).toBeLessThanOrEqual(64);
        expect(decodeApprovalPayload(payload)).toEqual({ approvalId: id, action });
      }
    }
  });
});

describe('ApprovalBook: corrupt records', () => {
  it('reads a corrupt approval as undefined, before and after a restart', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    await first.store.namespace('approval', z.unknown()).set(pending.id, { junk: true, status: 42 });

    await expect(first.book.get(pending.id)).resolves.toBeUndefined();
    await expect(first.book.pendingFor(THREAD)).resolves.toBeUndefined();
    await expect(first.book.allPending()).resolves.toEqual([]);

    const second = await reopen(first.store);
    await second.store.namespace('approval', z.unknown()).set(pending.id, 'not even an object');
    const { book } = await reopen(second.store);
    await expect(book.get(pending.id)).resolves.toBeUndefined();
    await expect(book.pendingFor(THREAD)).resolves.toBeUndefined();
    await expect(book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).resolves.toEqual({ ok: false, reason: 'unknown' });
    await expect(book.end(pending.id, 'expired')).resolves.toBeUndefined();
  });
});
