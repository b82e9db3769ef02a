/**
 * The approval flow over a real store and the in-memory test channel: it asks,
 * expires, answers, supersedes and cancels, and hands each ended question to
 * the injected callback exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApprovalBook, newApproval, newLoopQuestion, type PendingApproval } from '../../src/engine/approval-book.js';
import { ApprovalFlow, type ApprovalResumption } from '../../src/engine/approval-flow.js';
import { AgentEvents } from '../../src/engine/events.js';
import { Outbox } from '../../src/engine/outbox.js';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';
import { TestPlatform, testDm, testGroup } from '../support/test-channel.js';

const dir = mkdtempSync(join(tmpdir(), 'pincer-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ADA = { id: 'u1', name: 'Ada' };
const BOB = { id: 'u2', name: 'Bob' };
const DM = testDm(ADA.id);

const stores: Store[] = [];
const flows: ApprovalFlow[] = [];
afterEach(async () => {
  for (const flow of flows.splice(0)) await flow.close();
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

interface Rig {
  flow: ApprovalFlow;
  book: ApprovalBook;
  platform: TestPlatform;
  resumed: { approval: PendingApproval; how: ApprovalResumption }[];
  store: Store;
}

let files = 0;
async function rig(url = `sqlite://${join(dir, `flow-${++files}.sqlite`)}`): Promise<Rig & { url: string }> {
  const store = await Store.open({ url });
  stores.push(store);
  const platform = new TestPlatform();
  const channel = platform.createChannel();
  const book = new ApprovalBook(store);
  const outbox = new Outbox(new Map([[channel.name, channel]]), (text) => text, silentLogger);
  const resumed: Rig['resumed'] = [];
  const flow = new ApprovalFlow({ approvals: book, outbox, log: silentLogger, events: new AgentEvents() }, (approval, how) => resumed.push({ approval, how }));
  flows.push(flow);
  return { flow, book, platform, resumed, store, url };
}

function question(options: { timeoutMs?: number; allowAlways?: boolean; chat?: typeof DM } = {}): PendingApproval {
  const chat = options.chat ?? DM;
  return newApproval(
    {
      threadKey: `test:${chat.chatId}`,
      chat,
      requester: ADA,
      userId: `test:${ADA.id}`,
      call: { id: 'c1', name: 'files_write', arguments: '{"path":"a.txt"}' },
      deferred: [],
      view: { summary: 'Write a.txt', displayArgs: '{"path":"a.txt"}', allowAlways: options.allowAlways ?? true },
      reason: '  I will save your notes.  ',
    },
    options.timeoutMs ?? 60_000,
  );
}

const until = async (check: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('ApprovalFlow', () => {
  it('persists the question before its prompt is shown, and shows the tool, arguments and reason', async () => {
    const r = await rig();
    const q = question();
    expect(q.reason).toBe('I will save your notes.');
    expect(await r.flow.ask(q)).toBe(true);
    expect(await r.book.pendingFor(q.threadKey)).toMatchObject({ id: q.id, status: 'pending', prompt: { ids: [expect.any(String)] } });
    const [shown] = r.platform.approvals;
    expect(shown).toMatchObject({ state: 'shown', actions: ['approve', 'always', 'deny'] });
    expect(shown!.text).toContain('files_write');
    expect(shown!.text).toContain('I will save your notes.');
  });

  it('cancels a question whose prompt cannot be shown, and says so to the caller', async () => {
    const r = await rig();
    r.platform.failNext('sendApproval', 10, { retryable: false });
    const q = question();
    expect(await r.flow.ask(q)).toBe(false);
    expect(await r.book.get(q.id)).toMatchObject({ status: 'cancelled' });
    expect(await r.flow.pendingFor(q.threadKey)).toBeUndefined();
  }, 15_000);

  it('resumes the waiting work once when the requester answers, and shows the outcome', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    await r.flow.answer(r.platform.channel.press(q.id, 'always', ADA));
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', ADA));
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'approved', always: true }]);
    expect(r.platform.approvals[0]).toMatchObject({ state: 'resolved', outcome: { decision: 'always', by: 'Ada' } });
    expect(r.platform.notices.map((n) => n.text)).toEqual(['Approved.', 'This request was already answered.']);
  });

  it('refuses a press by someone else, and a choice the prompt does not offer, without resuming', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', BOB));
    await r.flow.answer(r.platform.channel.press(q.id, 'continue', ADA));
    expect(r.resumed).toEqual([]);
    expect(r.platform.notices.map((n) => n.text)).toEqual(['Only Ada can answer this.', 'That choice is not offered on this request.']);
    expect(await r.flow.pendingFor(q.threadKey)).toMatchObject({ id: q.id });
  });

  it('expires an unanswered question: the work resumes with the expiry and the prompt says so', async () => {
    const r = await rig();
    const q = question({ timeoutMs: 50 });
    await r.flow.ask(q);
    await until(() => r.resumed.length > 0 && r.platform.approvals[0]?.state === 'resolved');
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'expired' }]);
    expect(r.platform.approvals[0]!.outcome).toEqual({ decision: 'expired', expiredAs: 'denied' });
    // A press after the expiry changes nothing.
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', ADA));
    expect(r.resumed).toHaveLength(1);
  });

  it('ends the question as denied when a new message supersedes it, and as cancelled on /stop', async () => {
    const r = await rig();
    const first = question();
    await r.flow.ask(first);
    expect(await r.flow.supersede(first.threadKey, 'Ada')).toMatchObject({ id: first.id, status: 'denied', decidedBy: 'Ada' });
    const second = question();
    await r.flow.ask(second);
    expect(await r.flow.cancel(second.threadKey, 'Ada')).toMatchObject({ id: second.id, status: 'cancelled' });
    expect(await r.flow.cancel(second.threadKey, 'Ada')).toBeUndefined();
    expect(r.platform.approvals.map((a) => a.outcome?.decision)).toEqual(['denied', 'cancelled']);
    // The caller resumes superseded work itself; the flow hands over nothing here.
    expect(r.resumed).toEqual([]);
  });

  it('asks a loop question with Continue / Stop / Try another way, and hands back the choice', async () => {
    const r = await rig();
    const loop = newLoopQuestion(
      { threadKey: `test:${DM.chatId}`, chat: DM, requester: ADA, userId: `test:${ADA.id}`, call: { id: 'c9', name: 'web_search', arguments: '{"q":"x"}' }, detail: 'web_search ran 3 times.' },
      60_000,
    );
    await r.flow.ask(loop);
    const [shown] = r.platform.approvals;
    expect(shown!.actions).toEqual(['continue', 'stop', 'redirect']);
    expect(shown!.text).toContain('web_search ran 3 times.');
    expect(shown!.text).not.toContain('Approval needed');
    await r.flow.answer(r.platform.channel.press(loop.id, 'approve', ADA));
    await r.flow.answer(r.platform.channel.press(loop.id, 'always', ADA));
    expect(r.resumed).toEqual([]);
    await r.flow.answer(r.platform.channel.press(loop.id, 'redirect', ADA));
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'loop', choice: 'redirect' }]);
    expect(r.platform.approvals[0]).toMatchObject({ state: 'resolved', outcome: { decision: 'redirected', by: 'Ada' } });
    expect(r.platform.notices.map((n) => n.text)).toEqual([
      'That choice is not offered on this request.',
      'That choice is not offered on this request.',
      'Trying another way.',
    ]);
  });

  it('counts an unanswered loop question as Stop', async () => {
    const r = await rig();
    const loop = newLoopQuestion(
      { threadKey: `test:${DM.chatId}`, chat: DM, requester: ADA, userId: `test:${ADA.id}`, call: { id: 'c9', name: 'web_search', arguments: '{}' }, detail: 'web_search ran 3 times.' },
      50,
    );
    await r.flow.ask(loop);
    await until(() => r.platform.approvals[0]?.state === 'resolved');
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'expired' }]);
    expect(r.platform.approvals[0]!.outcome).toEqual({ decision: 'expired', expiredAs: 'stop' });
    expect(r.platform.approvals[0]!.text).toContain('Expired (treated as stop)');
  });

  it('re-arms the expiry of questions left open by a previous process', async () => {
    const first = await rig();
    const q = question({ timeoutMs: 150, chat: testGroup('g1') });
    await first.flow.ask(q);
    first.flow.close();
    const second = await rig(first.url);
    await second.flow.restore();
    await until(() => second.resumed.length > 0);
    expect(second.resumed[0]).toMatchObject({ approval: { id: q.id, status: 'expired' }, how: { kind: 'expired' } });
    expect(first.resumed).toEqual([]);
  });
});
