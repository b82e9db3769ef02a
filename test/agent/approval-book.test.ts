/**
 * The approval book on a real SQLite file: every state change is read back
 * through a freshly opened store, as a restarted process would see it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { actionsOf, ApprovalBook, grantText, newApproval, newLoopQuestion, pressRefusal, promptOf, subjectOf, type ApprovalPress, type ApprovalRequest, type PendingApproval } from '../../src/engine/approval-book.js';
import type { SentMessage } from '../../src/channels/types.js';
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

  it('still lists, after a restart, the questions left open when others were answered or ended (their expiries are armed again from it)', async () => {
    const first = await start();
    const [answered, ended, open1, open2] = [approval({ threadKey: 'telegram:1' }), approval({ threadKey: 'telegram:2' }), approval({ threadKey: 'telegram:3' }), approval({ threadKey: 'telegram:4' })];
    for (const question of [answered, ended, open1, open2]) await first.book.create(question);
    expect((await first.book.answer(answered.id, press(REQUESTER, 'approve', 'Alice'))).ok).toBe(true);
    expect(await first.book.end(ended.id, 'cancelled')).toMatchObject({ id: ended.id });

    const { book } = await reopen(first.store);
    expect((await book.allPending()).map((p) => p.id).sort()).toEqual([open1.id, open2.id].sort());
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

describe('ApprovalBook: the choices a press may make', () => {
  it.each([
    ['continue', 'continued'],
    ['stop', 'stopped'],
    ['redirect', 'redirected'],
  ] as const)('records %s on a loop question as %s', async (action, status) => {
    const first = await start();
    const loop = approval({ kind: 'loop', allowAlways: false });
    await first.book.create(loop);
    const result = await first.book.answer(loop.id, press(REQUESTER, action, 'Alice'));
    expect(result).toEqual({ ok: true, approval: { ...loop, status, decidedBy: 'Alice', decidedAt: T0 } });
    const { book } = await reopen(first.store);
    expect((await book.get(loop.id))?.status).toBe(status);
    expect(await book.pendingFor(THREAD)).toBeUndefined();
  });

  it.each([
    ['a loop question', { kind: 'loop', allowAlways: false }, ['approve', 'always', 'deny']],
    ['a tool approval', { kind: 'tool', allowAlways: true }, ['continue', 'stop', 'redirect']],
  ] as const)('refuses on %s a choice its prompt does not offer, and leaves it waiting', async (_what, overrides, actions) => {
    const first = await start();
    const pending = approval(overrides);
    await first.book.create(pending);
    for (const action of actions) {
      expect(await first.book.answer(pending.id, press(REQUESTER, action, 'Alice'))).toEqual({ ok: false, reason: 'not_offered', approval: pending });
    }
    const { book } = await reopen(first.store);
    expect(await book.pendingFor(THREAD)).toEqual(pending);
  });

  it('tells which approval a refused or late press was about, and that an expired one ended just now', async () => {
    let clock = T0;
    const first = await start(() => clock);
    const pending = approval();
    await first.book.create(pending);
    expect(await first.book.answer(pending.id, press('telegram:666', 'approve', 'Mallory'))).toEqual({ ok: false, reason: 'not_requester', approval: pending });
    clock = pending.expiresAt + 5;
    const expired = { ...pending, status: 'expired', decidedAt: clock };
    expect(await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).toEqual({ ok: false, reason: 'expired', approval: expired, endedNow: true });
    expect(await first.book.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).toEqual({ ok: false, reason: 'expired', approval: expired });
    // Someone else's press after the expiry: the approval is over, whoever pressed.
    expect(await first.book.answer(pending.id, press('telegram:666', 'approve', 'Mallory'))).toEqual({ ok: false, reason: 'expired', approval: expired });
    const answered = approval({ threadKey: 'telegram:9' });
    await first.book.create(answered);
    clock = T0;
    const decided = await first.book.answer(answered.id, press(REQUESTER, 'deny', 'Alice'));
    expect(await first.book.answer(answered.id, press(REQUESTER, 'approve', 'Alice'))).toEqual({ ok: false, reason: 'already_answered', approval: decided.approval });
  });

  it('records a deny as denied on a prompt without "Always allow"', async () => {
    const first = await start();
    const pending = approval({ allowAlways: false });
    await first.book.create(pending);
    const result = await first.book.answer(pending.id, press(REQUESTER, 'deny', 'Alice'));
    expect(result.ok && result.approval.status).toBe('denied');
  });

  it('sees an approval answered by another process as no longer waiting', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    expect((await first.book.pendingFor(THREAD))?.id).toBe(pending.id);
    const elsewhere = new ApprovalBook(first.store, () => T0);
    expect((await elsewhere.answer(pending.id, press(REQUESTER, 'approve', 'Alice'))).ok).toBe(true);
    expect(await first.book.pendingFor(THREAD)).toBeUndefined();
  });

  it('keeps, across a restart, the job that waits on an approval and what its call grants', async () => {
    const first = await start();
    const pending = approval({ work: { kind: 'job', id: 'j1' }, grant: { unattended: ['files_write'], asking: ['shell'] } });
    await first.book.create(pending);
    const { book } = await reopen(first.store);
    expect(await book.get(pending.id)).toMatchObject({ work: { kind: 'job', id: 'j1' }, grant: { unattended: ['files_write'], asking: ['shell'] } });
  });

  it('reads an approval stored before loop questions existed as a tool approval', async () => {
    const first = await start();
    const { kind: _kind, ...older } = approval();
    await first.store.namespace('approval', z.unknown()).set(older.id, older);
    const { book } = await reopen(first.store);
    expect((await book.get(older.id))?.kind).toBe('tool');
  });

  it('ends with who ended it only when told', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    const ended = await first.book.end(pending.id, 'expired');
    expect(ended).toEqual({ ...pending, status: 'expired', decidedAt: T0 });
  });

  it('lists an approval created twice once', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    await first.book.create(pending);
    const { book } = await reopen(first.store);
    expect(await book.allPending()).toEqual([pending]);
  });
});

describe('ApprovalBook: where the prompt is', () => {
  const shownAt: SentMessage = { chat: CHAT, ids: ['501'] };

  it('records where the prompt went, and a press that arrives while it is being shown waits for it', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    let show!: (location: SentMessage) => void;
    const showing = first.book.showPrompt(pending.id, () => new Promise((resolve) => (show = resolve)));
    const located = first.book.promptLocation(pending);
    show(shownAt);
    expect(await showing).toEqual(shownAt);
    expect(await located).toEqual(shownAt);
    const { book } = await reopen(first.store);
    expect((await book.get(pending.id))?.prompt).toEqual(shownAt);
    // Read back after a restart, from the stored record.
    expect(await book.promptLocation(pending)).toEqual(shownAt);
    expect(await book.promptLocation({ ...pending, prompt: { chat: CHAT, ids: ['7'] } })).toEqual({ chat: CHAT, ids: ['7'] });
  });

  it('records nothing for a prompt that could not be shown', async () => {
    const first = await start();
    const pending = approval();
    await first.book.create(pending);
    expect(await first.book.showPrompt(pending.id, () => Promise.resolve(undefined))).toBeUndefined();
    expect(await first.book.promptLocation(pending)).toBeUndefined();
    expect(await first.book.get(pending.id)).toEqual(pending);
  });
});

describe('newApproval', () => {
  const chat = { channel: 'telegram', chatId: '42', kind: 'group', scope: 'telegram:group:42' } as const;
  const request: ApprovalRequest = {
    threadKey: THREAD,
    chat,
    requester: { id: '7', name: 'Alice' },
    userId: REQUESTER,
    call: { id: 'call_1', name: 'shell', arguments: `{"command":"${'x'.repeat(2000)}"}` },
    deferred: [{ id: 'call_2', name: 'shell', arguments: '{}' }],
  };

  it('describes a call its tool gave no words for, with the start of its arguments, and no "Always allow"', () => {
    const made = newApproval(request, TEN_MINUTES, T0);
    expect(made).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
      kind: 'tool',
      threadKey: THREAD,
      chat,
      requester: { id: '7', name: 'Alice' },
      userId: REQUESTER,
      call: request.call,
      summary: 'Run the tool shell.',
      displayArgs: request.call.arguments.slice(0, 1000),
      allowAlways: false,
      deferred: request.deferred,
      createdAt: T0,
      expiresAt: T0 + TEN_MINUTES,
      status: 'pending',
    });
    expect(made.displayArgs).toHaveLength(1000);
  });

  it("keeps the tool's words, the topic and title of the chat, the waiting job, the grant, and a trimmed reason of at most 300 characters", () => {
    const made = newApproval(
      {
        ...request,
        chat: { ...chat, subId: '5', title: 'Ops' },
        work: { kind: 'job', id: 'j1' },
        view: { summary: 'Hand tools to a job', displayArgs: '{"tools":2}', allowAlways: true, grant: { unattended: ['files_write'], asking: ['shell'] } },
        reason: `   ${'r'.repeat(400)}  `,
      },
      TEN_MINUTES,
      T0,
    );
    expect(made).toMatchObject({
      chat: { ...chat, subId: '5', title: 'Ops' },
      work: { kind: 'job', id: 'j1' },
      summary: 'Hand tools to a job',
      displayArgs: '{"tools":2}',
      allowAlways: true,
      grant: { unattended: ['files_write'], asking: ['shell'] },
      reason: 'r'.repeat(300),
    });
    expect(newApproval({ ...request, reason: '   ' }, TEN_MINUTES, T0)).not.toHaveProperty('reason');
  });

  it('makes a loop question: its detail as the summary, no arguments, no later calls', () => {
    const loop = newLoopQuestion({ ...request, detail: 'shell ran 3 times.' }, TEN_MINUTES, T0);
    expect(loop).toMatchObject({ kind: 'loop', summary: 'shell ran 3 times.', displayArgs: '', allowAlways: false, deferred: [] });
    expect(subjectOf(loop)).toBe('loop');
    expect(subjectOf(approval())).toBe('write_file');
  });
});

describe('promptOf', () => {
  it('shows a tool approval with its tool, arguments, reason and grant, and the choices offered', () => {
    const pending = approval({ reason: 'To save your notes.', grant: { unattended: ['files_write'], asking: [] } });
    expect(promptOf(pending)).toEqual({
      id: pending.id,
      title: 'Approval needed',
      tool: 'write_file',
      summary: 'Write notes.txt',
      args: '{"path":"notes.txt"}',
      actions: ['approve', 'always', 'deny'],
      requestedBy: { id: '7', name: 'Alice' },
      expiresAt: pending.expiresAt,
      reason: 'To save your notes.',
      grant: 'Runs without asking: files_write',
    });
    expect(promptOf(approval({ allowAlways: false }))).not.toHaveProperty('reason');
    expect(promptOf(approval({ allowAlways: false })).actions).toEqual(['approve', 'deny']);
  });

  it('asks a loop question with Continue, Stop and Try another way, without a tool', () => {
    const loop = approval({ kind: 'loop', summary: 'web_search ran 3 times.', allowAlways: false });
    expect(promptOf(loop)).toEqual({
      id: loop.id,
      title: 'I seem to be going in circles',
      summary: 'web_search ran 3 times.\nShall I continue, stop here, or try another way?',
      actions: ['continue', 'stop', 'redirect'],
      requestedBy: { id: '7', name: 'Alice' },
      expiresAt: loop.expiresAt,
    });
    expect(actionsOf({ kind: 'loop', allowAlways: true })).toEqual(['continue', 'stop', 'redirect']);
  });

  it('says what a grant lets run unattended, "nothing" when it is none, and what still asks', () => {
    expect(grantText({ unattended: ['files_write', 'http_fetch'], asking: ['shell'] })).toBe('Runs without asking: files_write, http_fetch\nAsks you each time: shell');
    expect(grantText({ unattended: [], asking: ['shell', 'files_write'] })).toBe('Runs without asking: nothing\nAsks you each time: shell, files_write');
  });
});

describe('pressRefusal, the sub-conversation', () => {
  it('matches a missing sub-conversation only to another missing one', () => {
    const pending = approval();
    expect(pressRefusal(pending, { userId: REQUESTER, chat: CHAT })).toBeUndefined();
    expect(pressRefusal(pending, { userId: REQUESTER, chat: { ...CHAT, subId: '' } })).toBeUndefined();
    expect(pressRefusal({ ...pending, chat: { ...pending.chat, subId: '5' } }, { userId: REQUESTER, chat: CHAT })).toBe('wrong_chat');
    expect(pressRefusal({ ...pending, chat: { ...pending.chat, subId: '5' } }, { userId: REQUESTER, chat: { ...CHAT, subId: '5' } })).toBeUndefined();
  });
});
