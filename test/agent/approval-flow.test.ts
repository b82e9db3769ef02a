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
import { STALE_BUTTON } from '../../src/channels/types.js';
import { ApprovalFlow, type ApprovalResumption } from '../../src/engine/approval-flow.js';
import { AgentEvents } from '../../src/engine/events.js';
import { Outbox } from '../../src/engine/outbox.js';
import { pino } from 'pino';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';
import { InProcessTimers, type Timers } from '../../src/store/timers.js';
import { TestPlatform, testDm, testGroup } from '../support/test-channel.js';
import type { TestPlatformOptions } from '../support/test-platform.js';

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
  /** The approval events (what the metrics count), as `tool status`. */
  events: string[];
  /** What the flow logged for the operator. */
  logged: { level: number; msg: string; thread?: string; channel?: string }[];
  /** Background work the flow handed to shutdown (expiries firing). */
  background: Promise<unknown>[];
  store: Store;
}

let files = 0;
/** Options of a rig: the book's clock (the expiry a press finds), the channel's capabilities, the expiry timers. */
interface RigOptions {
  now?: () => number;
  platform?: TestPlatformOptions;
  timers?: Timers;
}

async function rig(url = `sqlite://${join(dir, `flow-${++files}.sqlite`)}`, options: RigOptions = {}): Promise<Rig & { url: string }> {
  const store = await Store.open({ url });
  stores.push(store);
  const platform = new TestPlatform(options.platform);
  const channel = platform.createChannel();
  const book = new ApprovalBook(store, options.now);
  const outbox = new Outbox(new Map([[channel.name, channel]]), (text) => text, silentLogger);
  const resumed: Rig['resumed'] = [];
  const agentEvents = new AgentEvents();
  const events: string[] = [];
  agentEvents.on('approval', (event) => events.push(`${event.thread} ${event.tool} ${event.status}`));
  const logged: Rig['logged'] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void logged.push(JSON.parse(line) as Rig['logged'][number]) });
  const background: Promise<unknown>[] = [];
  const flow = new ApprovalFlow({ approvals: book, outbox, log, events: agentEvents }, (approval, how) => resumed.push({ approval, how }), (work) => background.push(work), options.timers);
  flows.push(flow);
  return { flow, book, platform, resumed, events, logged, background, store, url };
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

  it('tells the presser of each answer what happens next, and hands the matching answer to the work', async () => {
    const r = await rig();
    const approve = question({ allowAlways: false });
    await r.flow.ask(approve);
    await r.flow.answer(r.platform.channel.press(approve.id, 'approve', ADA));
    const deny = question();
    await r.flow.ask(deny);
    await r.flow.answer(r.platform.channel.press(deny.id, 'deny', ADA));
    for (const choice of ['continue', 'stop'] as const) {
      const loop = loopQuestion();
      await r.flow.ask(loop);
      await r.flow.answer(r.platform.channel.press(loop.id, choice, ADA));
    }
    expect(r.resumed.map(({ how }) => how)).toEqual([
      { kind: 'approved', always: false },
      { kind: 'denied' },
      { kind: 'loop', choice: 'continue' },
      { kind: 'loop', choice: 'stop' },
    ]);
    expect(r.platform.notices.map((n) => n.text)).toEqual(['Approved.', 'Denied.', 'Continuing.', 'Stopping.']);
    expect(r.platform.approvals.map((a) => a.outcome)).toEqual([
      { decision: 'approved', by: 'Ada' },
      { decision: 'denied', by: 'Ada' },
      { decision: 'continued', by: 'Ada' },
      { decision: 'stopped', by: 'Ada' },
    ]);
  });

  it('sends no notice where the prompt itself shows the answer (a platform that answers in place)', async () => {
    const r = await rig(undefined, { platform: { capabilities: { answersInPlace: true } } });
    const q = question();
    await r.flow.ask(q);
    await r.flow.answer(r.platform.channel.press(q.id, 'deny', ADA));
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'denied' }]);
    expect(r.platform.notices).toEqual([]);
    expect(r.platform.approvals[0]).toMatchObject({ state: 'resolved', outcome: { decision: 'denied', by: 'Ada' } });
  });

  it('ends a question pressed after its expiry (before its timer fired) as expired, once: nothing is approved', async () => {
    let clock = Date.now();
    const r = await rig(undefined, { now: () => clock });
    const q = question({ timeoutMs: 60_000 });
    await r.flow.ask(q);
    clock += 61_000;
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', ADA));
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'expired' }]);
    expect(r.resumed[0]!.approval).toMatchObject({ id: q.id, status: 'expired' });
    expect(r.platform.approvals[0]).toMatchObject({ state: 'resolved', outcome: { decision: 'expired', expiredAs: 'denied' } });
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', ADA));
    expect(r.resumed).toHaveLength(1);
    expect(r.platform.notices.map((n) => n.text)).toEqual(['This request expired; the action was not run.', 'This request expired; the action was not run.']);
    expect(await r.flow.pendingFor(q.threadKey)).toBeUndefined();
  });

  it('refuses a press from another conversation and one for a prompt it has no record of', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    const fromElsewhere = { ...r.platform.channel.press(q.id, 'approve', ADA), chat: testGroup('g2') };
    await r.flow.answer(fromElsewhere);
    const unknown = { ...r.platform.channel.press(q.id, 'approve', ADA), approvalId: 'no-such-id' };
    await r.flow.answer(unknown);
    expect(r.resumed).toEqual([]);
    expect(r.platform.notices.map((n) => n.text)).toEqual(['This approval belongs to another conversation.', STALE_BUTTON]);
    expect(await r.flow.pendingFor(q.threadKey)).toMatchObject({ id: q.id, status: 'pending' });
  });

  it('resumes the work and updates the prompt even when the notice fails', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    const press = { ...r.platform.channel.press(q.id, 'approve', ADA), respond: () => Promise.reject(new Error('toast failed')) };
    await r.flow.answer(press);
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'approved', always: false }]);
    expect(r.platform.approvals[0]).toMatchObject({ state: 'resolved', outcome: { decision: 'approved', by: 'Ada' } });
    expect(await r.book.get(q.id)).toMatchObject({ status: 'approved', decidedBy: 'Ada' });
    expect(r.logged).toContainEqual(expect.objectContaining({ level: 40, msg: 'approval notice not shown', channel: 'test' }));
  });

  it('keeps a question open and answerable when its expiry cannot be armed, and tells the operator', async () => {
    class Unreachable extends InProcessTimers {
      override arm(): Promise<void> {
        return Promise.reject(new Error('Redis is down'));
      }
    }
    const r = await rig(undefined, { timers: new Unreachable() });
    const q = question();
    expect(await r.flow.ask(q)).toBe(true);
    expect(r.platform.approvals[0]).toMatchObject({ state: 'shown' });
    expect(r.logged).toContainEqual(expect.objectContaining({ level: 50, msg: 'approval expiry not armed', thread: q.threadKey }));
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', ADA));
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'approved', always: false }]);
  });

  it('ends a question once when /stop and a new message come at the same time', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    const [stopped, superseded] = await Promise.all([r.flow.cancel(q.threadKey, 'Ada'), r.flow.supersede(q.threadKey, 'Ada')]);
    expect([stopped, superseded].filter(Boolean)).toHaveLength(1);
    expect(r.platform.approvals).toHaveLength(1);
    expect(r.platform.approvals[0]!.state).toBe('resolved');
  });

  it('does not expire a question answered before its timer fires, and arms no expiry after shutdown', async () => {
    const r = await rig();
    const q = question({ timeoutMs: 100 });
    await r.flow.ask(q);
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', ADA));
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(r.resumed.map(({ how }) => how)).toEqual([{ kind: 'approved', always: false }]);

    await r.flow.close();
    const late = question({ timeoutMs: 50 });
    expect(await r.flow.ask(late)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.resumed).toHaveLength(1);
    expect(await r.flow.pendingFor(late.threadKey)).toMatchObject({ id: late.id, status: 'pending' });
  });
});

describe('ApprovalFlow, around the answer', () => {
  it('counts each question asked and how it ended, for the metrics', async () => {
    const r = await rig();
    const thread = `test:${DM.chatId}`;
    const q = question();
    await r.flow.ask(q);
    await r.flow.answer(r.platform.channel.press(q.id, 'always', ADA));
    const loop = loopQuestion();
    await r.flow.ask(loop);
    await r.flow.cancel(loop.threadKey, 'Ada');
    // A chat on a channel that is not running: its prompt cannot be shown.
    const unshown = question({ chat: testDm(ADA.id, 'gone') });
    expect(await r.flow.ask(unshown)).toBe(false);
    expect(r.events).toEqual([
      `${thread} files_write requested`,
      `${thread} files_write always`,
      `${thread} loop requested`,
      `${thread} loop cancelled`,
      `${unshown.threadKey} files_write requested`,
      `${unshown.threadKey} files_write cancelled`,
    ]);
  });

  it('answers privately, and tells the platform the press was received once it is stored', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    const replies: unknown[] = [];
    let recorded = 0;
    const press = { ...r.platform.channel.press(q.id, 'approve', ADA), respond: (reply: unknown) => Promise.resolve(void replies.push(reply)) };
    await r.flow.answer(press, () => (recorded += 1));
    expect(replies).toEqual([{ text: 'Approved.', private: true }]);
    expect(recorded).toBe(1);
    await r.flow.answer({ ...press, approvalId: 'no-such-id' }, () => (recorded += 1));
    expect(recorded).toBe(2);
    expect(replies).toEqual([{ text: 'Approved.', private: true }, { text: STALE_BUTTON, private: true }]);
  });

  it('does not expire here a question another instance answered first', async () => {
    const url = `sqlite://${join(dir, `flow-${++files}.sqlite`)}`;
    const asker = await rig(url);
    const other = await rig(url);
    const q = question({ timeoutMs: 150 });
    await asker.flow.ask(q);
    const answered = await other.book.answer(q.id, { userId: q.userId, name: 'Ada', chat: q.chat, action: 'approve' });
    expect(answered.ok).toBe(true);
    // The asker's timer fires and finds the question answered.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(asker.resumed).toEqual([]);
    expect(asker.background).toHaveLength(1);
    await expect(asker.background[0]).resolves.toBeUndefined();
    expect(await asker.book.get(q.id)).toMatchObject({ status: 'approved' });
  });

  it('tells the operator what was asked, which press was refused and why, and how a question was answered', async () => {
    const r = await rig();
    const q = question();
    await r.flow.ask(q);
    await r.flow.answer(r.platform.channel.press(q.id, 'approve', BOB));
    await r.flow.answer(r.platform.channel.press(q.id, 'deny', ADA));
    type Line = { level: number; msg: string; thread?: string; tool?: string; deferred?: number; approval?: string; reason?: string; decision?: string };
    const lines = (r.logged as Line[]).map(({ level, msg, thread, tool, deferred, approval, reason, decision }) => ({ level, msg, thread, tool, deferred, approval, reason, decision }));
    expect(lines).toEqual([
      { level: 30, msg: 'approval requested', thread: q.threadKey, tool: 'files_write', deferred: 0, approval: undefined, reason: undefined, decision: undefined },
      { level: 20, msg: 'approval press refused', thread: undefined, tool: undefined, deferred: undefined, approval: q.id, reason: 'not_requester', decision: undefined },
      { level: 30, msg: 'approval answered', thread: q.threadKey, tool: 'files_write', deferred: undefined, approval: undefined, reason: undefined, decision: 'denied' },
    ]);
  });

  it('shuts down cleanly when it never asked anything', async () => {
    const r = await rig();
    await expect(r.flow.close()).resolves.toBeUndefined();
  });
});

function loopQuestion(): PendingApproval {
  return newLoopQuestion(
    { threadKey: `test:${DM.chatId}`, chat: DM, requester: ADA, userId: `test:${ADA.id}`, call: { id: 'c9', name: 'web_search', arguments: '{}' }, detail: 'web_search ran 3 times.' },
    60_000,
  );
}
