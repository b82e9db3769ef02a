/**
 * The approval book: pending approvals persisted before their prompt is
 * shown, claimed exactly once when answered, and found again after a restart.
 * The lifecycle around it (asking, expiry, resuming) is the approval flow's.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ApprovalPrompt, ChatAddress, ChatInfo, PromptAction, SentMessage } from '../channels/types.js';
import type { ToolCall } from '../llm/types.js';
import type { Namespace, Store } from '../store/store.js';
import type { ToolGrant } from '../tools/types.js';
import { ChatRecordSchema, ToolCallSchema } from './history.js';

const STATUSES = ['pending', 'approved', 'always', 'denied', 'continued', 'stopped', 'redirected', 'expired', 'cancelled'] as const;

/** Where an approval stands: waiting, answered with one of its choices, or ended without an answer. */
export type ApprovalStatus = (typeof STATUSES)[number];

/**
 * A question waiting for its requester's answer, with what is needed to resume
 * the turn: a tool call to approve (`tool`), or a loop the agent seems stuck
 * in, to continue, stop or try another way (`loop`; `call` is the last call
 * that repeated and `summary` says what repeats).
 */
export const PendingApprovalSchema = z.object({
  id: z.string(),
  kind: z.enum(['tool', 'loop']).default('tool'),
  threadKey: z.string(),
  /** The work that waits on the answer when it is not the chat turn of `threadKey`: a background job. */
  work: z.object({ kind: z.string(), id: z.string() }).optional(),
  chat: ChatRecordSchema,
  requester: z.object({ id: z.string(), name: z.string() }),
  /** Qualified user id (`telegram:42`). */
  userId: z.string(),
  call: ToolCallSchema,
  summary: z.string(),
  displayArgs: z.string(),
  reason: z.string().optional(),
  allowAlways: z.boolean(),
  /** What a call that hands tools to background work grants (shown first in its prompt). */
  grant: z.object({ unattended: z.array(z.string()), asking: z.array(z.string()) }).optional(),
  /** Later calls of the same batch that also need approval, asked one at a time. */
  deferred: z.array(ToolCallSchema),
  createdAt: z.number(),
  expiresAt: z.number(),
  status: z.enum(STATUSES),
  decidedBy: z.string().optional(),
  decidedAt: z.number().optional(),
  prompt: z
    .object({
      chat: z.object({ channel: z.string(), chatId: z.string(), subId: z.string().optional() }),
      ids: z.array(z.string()),
    })
    .optional(),
});
/** A tool call waiting for its requester's answer. */
export type PendingApproval = z.infer<typeof PendingApprovalSchema>;

/** The result of trying to answer an approval. */
export type ClaimResult =
  | { ok: true; approval: PendingApproval }
  | {
      ok: false;
      reason: 'unknown' | PressRefusal | 'not_offered' | 'already_answered' | 'expired';
      approval?: PendingApproval;
      /** This press found the approval past its expiry and ended it (its turn must now resume). */
      endedNow?: boolean;
    };

/** A button press: who pressed, in which conversation, and what. */
export interface ApprovalPress {
  /** Qualified user id (`telegram:42`). */
  userId: string;
  /** Display name, recorded as who decided. */
  name: string;
  /** The conversation the press came from. */
  chat: ChatAddress;
  action: PromptAction;
}

/** Why a press may not answer an approval at all. */
export type PressRefusal = 'wrong_chat' | 'not_requester';

/**
 * Whether `press` may answer `approval`: only its requester, and only in the
 * conversation where it was asked (a payload replayed from another chat, even
 * by the requester, is refused). Undefined when it may.
 */
export function pressRefusal(approval: PendingApproval, press: Pick<ApprovalPress, 'userId' | 'chat'>): PressRefusal | undefined {
  if (!sameConversation(approval.chat, press.chat)) return 'wrong_chat';
  if (approval.userId !== press.userId) return 'not_requester';
  return undefined;
}

/** Same channel, chat and sub-conversation (topic, thread); a missing sub-conversation matches only another missing one. */
function sameConversation(a: ChatAddress, b: ChatAddress): boolean {
  return a.channel === b.channel && a.chatId === b.chatId && (a.subId ?? '') === (b.subId ?? '');
}

const ACTION_STATUS: Record<PromptAction, ApprovalStatus> = {
  approve: 'approved',
  always: 'always',
  deny: 'denied',
  continue: 'continued',
  stop: 'stopped',
  redirect: 'redirected',
};

/** The choices an approval's prompt offers. */
export function actionsOf(approval: Pick<PendingApproval, 'allowAlways' | 'kind'>): PromptAction[] {
  if (approval.kind === 'loop') return ['continue', 'stop', 'redirect'];
  return approval.allowAlways ? ['approve', 'always', 'deny'] : ['approve', 'deny'];
}

/** What a question is about, for logs and events: the tool, or `loop`. */
export function subjectOf(approval: Pick<PendingApproval, 'kind' | 'call'>): string {
  return approval.kind === 'loop' ? 'loop' : approval.call.name;
}

/** The status a press of `action` gives; undefined when the prompt does not offer it. */
function statusFor(approval: PendingApproval, action: PromptAction): ApprovalStatus | undefined {
  // A stale "Always allow" button counts as a plain approval: the person did approve.
  if (approval.kind === 'tool' && action === 'always' && !approval.allowAlways) return 'approved';
  return actionsOf(approval).includes(action) ? ACTION_STATUS[action] : undefined;
}

/** The persisted book of approvals. */
export class ApprovalBook {
  private readonly records: Namespace<PendingApproval>;
  private readonly byThread: Namespace<string>;
  private readonly open: Namespace<string[]>;
  /** Prompts being shown right now: a press can arrive before their location is recorded. */
  private readonly showing = new Map<string, Promise<SentMessage | undefined>>();
  /** Each thread's current approval id (null: none), as last read or written by this process. */
  private readonly threadIndex = new Map<string, string | null>();
  /** Set once every open approval has been read: a thread missing from the index then has none. */
  private indexComplete = false;

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.records = store.namespace('approval', PendingApprovalSchema, 1);
    this.byThread = store.namespace('approval-thread', z.string(), 1);
    this.open = store.namespace('approval-open', z.array(z.string()), 1);
  }

  /** A new opaque id: 12 url-safe characters. */
  static newId(): string {
    return randomBytes(9).toString('base64url');
  }

  /** Persists a new pending approval and marks it as its thread's current one. */
  async create(approval: PendingApproval): Promise<void> {
    await this.records.set(approval.id, approval);
    await this.byThread.set(approval.threadKey, approval.id);
    this.threadIndex.set(approval.threadKey, approval.id);
    await this.open.update('all', (ids) => [...(ids ?? []).filter((id) => id !== approval.id), approval.id]);
  }

  /**
   * Shows an approval's prompt through `show` and records where it went. Until
   * that is recorded, {@link promptLocation} waits for it.
   */
  async showPrompt(id: string, show: () => Promise<SentMessage | undefined>): Promise<SentMessage | undefined> {
    const shown = show();
    this.showing.set(id, shown);
    try {
      const location = await shown;
      if (location) await this.records.update(id, (current) => (current ? { ...current, prompt: location } : current));
      return location;
    } finally {
      this.showing.delete(id);
    }
  }

  /** Where an approval's prompt is, once it has been shown. */
  async promptLocation(approval: PendingApproval): Promise<SentMessage | undefined> {
    return approval.prompt ?? (await this.showing.get(approval.id)) ?? (await this.records.get(approval.id))?.prompt;
  }

  get(id: string): Promise<PendingApproval | undefined> {
    return this.records.get(id);
  }

  /** The thread's pending approval, if one is waiting. */
  async pendingFor(threadKey: string): Promise<PendingApproval | undefined> {
    let id = this.threadIndex.get(threadKey);
    if (id === undefined && this.indexComplete) return undefined;
    if (id === undefined) {
      id = (await this.byThread.get(threadKey)) ?? null;
      // Once the index is complete a missing entry means "none": no entry per thread ever seen.
      if (id || !this.indexComplete) this.threadIndex.set(threadKey, id);
    }
    if (!id) return undefined;
    const approval = await this.records.get(id);
    return approval?.status === 'pending' ? approval : undefined;
  }

  /** Every approval still waiting (for expiry timers after a restart). */
  async allPending(): Promise<PendingApproval[]> {
    const ids = (await this.open.get('all')) ?? [];
    const found = await Promise.all(ids.map((id) => this.records.get(id)));
    const pending = found.filter((a): a is PendingApproval => a?.status === 'pending');
    for (const approval of pending) this.threadIndex.set(approval.threadKey, approval.id);
    // Every approval this process did not create is known now (one process per store).
    this.indexComplete = true;
    return pending;
  }

  /**
   * Answers an approval with a press. Exactly one answer wins, even if the same
   * press is delivered twice; the new status is persisted before this resolves.
   * A press from another conversation learns nothing and changes nothing.
   */
  async answer(id: string, press: ApprovalPress): Promise<ClaimResult> {
    let result: ClaimResult = { ok: false, reason: 'unknown' };
    await this.records.update(id, (current) => {
      if (!current) return current;
      const refusal = pressRefusal(current, press);
      if (refusal === 'wrong_chat') {
        result = { ok: false, reason: refusal };
        return current;
      }
      if (current.status !== 'pending') {
        result = { ok: false, reason: current.status === 'expired' ? 'expired' : 'already_answered', approval: current };
        return current;
      }
      if (refusal) {
        result = { ok: false, reason: refusal, approval: current };
        return current;
      }
      if (current.expiresAt <= this.now()) {
        const expired = { ...current, status: 'expired' as const, decidedAt: this.now() };
        result = { ok: false, reason: 'expired', approval: expired, endedNow: true };
        return expired;
      }
      const status = statusFor(current, press.action);
      if (!status) {
        result = { ok: false, reason: 'not_offered', approval: current };
        return current;
      }
      const decided = { ...current, status, decidedBy: press.name, decidedAt: this.now() };
      result = { ok: true, approval: decided };
      return decided;
    });
    if (result.approval && result.approval.status !== 'pending') await this.close(result.approval);
    return result;
  }

  /** Ends a pending approval without a button press (expiry, /stop, a new message). */
  async end(id: string, status: 'expired' | 'cancelled' | 'denied', by?: string): Promise<PendingApproval | undefined> {
    let ended: PendingApproval | undefined;
    await this.records.update(id, (current) => {
      if (!current || current.status !== 'pending') return current;
      ended = { ...current, status, decidedAt: this.now(), ...(by ? { decidedBy: by } : {}) };
      return ended;
    });
    if (ended) await this.close(ended);
    return ended;
  }

  private async close(approval: PendingApproval): Promise<void> {
    await this.open.update('all', (ids) => (ids ?? []).filter((id) => id !== approval.id));
    const current = await this.byThread.get(approval.threadKey);
    if (current === approval.id) {
      await this.byThread.delete(approval.threadKey);
      if (this.indexComplete) this.threadIndex.delete(approval.threadKey);
      else this.threadIndex.set(approval.threadKey, null);
    }
  }
}

/** What a new approval is made of; its id, times and status are filled in. */
export interface ApprovalRequest {
  threadKey: string;
  /** The work that waits on the answer, when it is not the chat turn of `threadKey`. */
  work?: { kind: string; id: string };
  chat: ChatInfo;
  requester: { id: string; name: string };
  /** Qualified user id (`telegram:42`). */
  userId: string;
  call: ToolCall;
  /** Later calls of the same batch that also need approval. */
  deferred: readonly ToolCall[];
  /** How the tool describes this call; a generic description when it gave none. */
  view?: { summary: string; displayArgs: string; allowAlways: boolean; grant?: ToolGrant | undefined } | undefined;
  /** The model's words before the call, shown as the reason. */
  reason?: string | undefined;
}

/** A new pending approval for `request`, expiring `timeoutMs` from `now`. The one place approvals are built. */
export function newApproval(request: ApprovalRequest, timeoutMs: number, now = Date.now()): PendingApproval {
  const { view, call } = request;
  const { channel, chatId, subId, kind, title, scope } = request.chat;
  const approval: PendingApproval = {
    id: ApprovalBook.newId(),
    kind: 'tool',
    threadKey: request.threadKey,
    chat: { channel, chatId, kind, scope, ...(subId !== undefined ? { subId } : {}), ...(title !== undefined ? { title } : {}) },
    requester: { id: request.requester.id, name: request.requester.name },
    userId: request.userId,
    call,
    summary: view?.summary ?? `Run the tool ${call.name}.`,
    displayArgs: view?.displayArgs ?? call.arguments.slice(0, 1000),
    allowAlways: view?.allowAlways ?? false,
    deferred: [...request.deferred],
    createdAt: now,
    expiresAt: now + timeoutMs,
    status: 'pending',
  };
  if (request.work) approval.work = { ...request.work };
  const reason = request.reason?.trim();
  if (reason) approval.reason = reason.slice(0, 300);
  if (view?.grant) approval.grant = { unattended: [...view.grant.unattended], asking: [...view.grant.asking] };
  return approval;
}

/** What a loop question is made of. */
export interface LoopQuestionRequest extends Omit<ApprovalRequest, 'deferred' | 'view' | 'reason'> {
  /** In plain words, what keeps repeating. */
  detail: string;
}

/** A new question to the requester about a loop the turn seems stuck in. */
export function newLoopQuestion(request: LoopQuestionRequest, timeoutMs: number, now = Date.now()): PendingApproval {
  const question = newApproval({ ...request, deferred: [], view: { summary: request.detail, displayArgs: '', allowAlways: false } }, timeoutMs, now);
  return { ...question, kind: 'loop' };
}

/** The channel-neutral prompt of an approval. */
export function promptOf(approval: PendingApproval): ApprovalPrompt {
  if (approval.kind === 'loop') {
    return {
      id: approval.id,
      title: 'I seem to be going in circles',
      summary: `${approval.summary}
Shall I continue, stop here, or try another way?`,
      actions: actionsOf(approval),
      requestedBy: approval.requester,
      expiresAt: approval.expiresAt,
    };
  }
  const prompt: ApprovalPrompt = {
    id: approval.id,
    title: 'Approval needed',
    tool: approval.call.name,
    summary: approval.summary,
    args: approval.displayArgs,
    actions: actionsOf(approval),
    requestedBy: approval.requester,
    expiresAt: approval.expiresAt,
  };
  if (approval.reason) prompt.reason = approval.reason;
  if (approval.grant) prompt.grant = grantText(approval.grant);
  return prompt;
}

/**
 * A grant in the words of a prompt: which tools will run without asking (the
 * line a person must not miss), and which will still ask each time.
 *
 * @example grantText({ unattended: ['files_write'], asking: ['shell'] })
 * // => 'Runs without asking: files_write\nAsks you each time: shell'
 */
export function grantText(grant: ToolGrant): string {
  const lines = [`Runs without asking: ${grant.unattended.join(', ') || 'nothing'}`];
  if (grant.asking.length) lines.push(`Asks you each time: ${grant.asking.join(', ')}`);
  return lines.join('\n');
}
