/**
 * The approval flow: the one owner of a question's life. It persists the
 * question before its prompt is shown, arms its expiry, takes the presses,
 * ends it on /stop or a new message, shows how it ended, and hands the answer
 * to whoever waits on it through an injected callback (a chat turn today; a
 * background job or another instance can wait the same way).
 */
import { qualifiedUserId, STALE_BUTTON, type ApprovalOutcome, type InboundApprovalAnswer, type InboundMessage } from '../channels/types.js';
import { promptOf, subjectOf, type ApprovalBook, type ClaimResult, type PendingApproval } from './approval-book.js';
import { InProcessTimers, type Timers } from '../store/timers.js';
import type { AgentServices } from './services.js';

/** How a question came to an end, for the work that waits on it. */
export type ApprovalResumption =
  | { kind: 'approved'; always: boolean }
  | { kind: 'denied' }
  /** A loop question's answer: go on, stop and report, or go on with a note to try another way. */
  | { kind: 'loop'; choice: 'continue' | 'stop' | 'redirect' }
  | { kind: 'expired' }
  | { kind: 'superseded'; messages: InboundMessage[] };

/** Hands an ended question back to the work that asked it. Called once per question. */
export type ResumeWork = (approval: PendingApproval, how: ApprovalResumption) => void;

/** Texts shown privately to the presser of a button that cannot answer. */
export const PRESS_NOTICES = {
  /** A prompt pincer has no record of: the same notice as a button no adapter can read. */
  unknown: STALE_BUTTON,
  already_answered: 'This request was already answered.',
  expired: 'This request expired; the action was not run.',
  wrong_chat: 'This approval belongs to another conversation.',
  not_offered: 'That choice is not offered on this request.',
} as const;

/** The services the flow uses. */
export type FlowServices = Pick<AgentServices, 'approvals' | 'outbox' | 'log' | 'events'>;

/** The approval flow of a running agent. */
export class ApprovalFlow {
  private readonly book: ApprovalBook;
  private closed = false;
  private timersStarted: Promise<void> | undefined;
  /** Expiries being armed: shutdown lets them finish, so that a question asked just before it still expires. */
  private readonly arming = new Set<Promise<void>>();

  /**
   * @param resume hands each ended question to its waiting work
   * @param track keeps background work (an expiry firing) visible to shutdown and idle checks
   * @param timers the expiry timers: delayed jobs on Redis, so that a question
   *   expires even when the instance that asked it is gone
   */
  constructor(
    private readonly services: FlowServices,
    private readonly resume: ResumeWork,
    private readonly track: (work: Promise<unknown>) => void = (work) => void work,
    private readonly timers: Timers = new InProcessTimers(),
  ) {
    this.book = services.approvals;
  }

  /** Starts the expiry timers and re-arms those of every question still open from before a restart. */
  async restore(): Promise<void> {
    await this.startTimers();
    for (const approval of await this.book.allPending()) await this.armExpiry(approval);
  }

  /** Stops the expiry timers here (shutdown); the questions stay open, and delayed jobs wait in Redis. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.arming);
    await this.timersStarted?.catch(() => undefined);
    await this.timers.stop();
  }

  /** The thread's open question, if one waits. */
  pendingFor(threadKey: string): Promise<PendingApproval | undefined> {
    return this.book.pendingFor(threadKey);
  }

  /**
   * Asks: the question is persisted, its expiry armed, then its prompt shown
   * (so that no prompt is ever out without an expiry, whenever the process
   * dies). False when the prompt could not be shown; the question is then
   * cancelled (nobody could answer it) and the caller says so.
   */
  async ask(approval: PendingApproval): Promise<boolean> {
    this.services.log.info({ thread: approval.threadKey, tool: subjectOf(approval), deferred: approval.deferred.length }, 'approval requested');
    await this.book.create(approval);
    this.services.events.emit('approval', { thread: approval.threadKey, tool: subjectOf(approval), status: 'requested' });
    await this.armExpiry(approval);
    const shown = await this.book.showPrompt(approval.id, () => this.services.outbox.sendApproval(approval.chat, promptOf(approval)));
    if (shown) return true;
    await this.book.end(approval.id, 'cancelled');
    void this.disarm(approval.id);
    this.services.events.emit('approval', { thread: approval.threadKey, tool: subjectOf(approval), status: 'cancelled' });
    return false;
  }

  /**
   * A button press (or a typed answer). A press that cannot answer gets a
   * private notice and changes nothing; an answer resumes the waiting work
   * first, then thanks the presser and updates the prompt.
   */
  async answer(event: InboundApprovalAnswer, recorded?: () => void): Promise<void> {
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    let claim: ClaimResult;
    try {
      claim = await this.book.answer(event.approvalId, { userId, name: event.sender.name, chat: event.chat, action: event.action });
    } finally {
      // The press is stored (or refused): the platform may be told it was received.
      recorded?.();
    }
    if (!claim.ok) {
      this.services.log.debug({ approval: event.approvalId, reason: claim.reason }, 'approval press refused');
      if (claim.endedNow && claim.approval) await this.ended(claim.approval, { kind: 'expired' });
      await this.notify(event, refusalText(claim));
      return;
    }
    const approval = claim.approval;
    this.services.log.info({ thread: approval.threadKey, tool: subjectOf(approval), decision: approval.status }, 'approval answered');
    // The work resumes first: a message sent right after the press then joins it,
    // and a failing notice or prompt edit cannot hold it up.
    void this.disarm(approval.id);
    const how = resumptionOf(approval);
    this.resume(approval, how);
    // The outcome line says it all where the answer was typed; elsewhere the presser gets a toast.
    if (!this.services.outbox.channelOf(event.chat)?.capabilities.answersInPlace) {
      await this.notify(event, ANSWER_NOTICES[how.kind === 'loop' ? how.choice : how.kind === 'denied' ? 'denied' : 'approved']);
    }
    await this.showOutcome(approval);
  }

  /**
   * A new message while the thread's question waits counts as Deny. Returns
   * the ended question; the caller resumes its work with the new messages.
   */
  async supersede(threadKey: string, by: string): Promise<PendingApproval | undefined> {
    return this.endOpen(threadKey, 'denied', by);
  }

  /** /stop while a question waits: it is cancelled. Returns the ended question. */
  async cancel(threadKey: string, by: string): Promise<PendingApproval | undefined> {
    return this.endOpen(threadKey, 'cancelled', by);
  }

  /**
   * Edits the prompt to show how the question ended and removes its buttons.
   * Cosmetic: a failure is logged and never stops the work that goes on.
   */
  async showOutcome(approval: PendingApproval): Promise<void> {
    this.services.events.emit('approval', { thread: approval.threadKey, tool: subjectOf(approval), status: approval.status === 'pending' ? 'cancelled' : approval.status });
    try {
      const shown = await this.book.promptLocation(approval);
      if (shown) await this.services.outbox.resolveApproval(shown, promptOf(approval), outcomeOf(approval));
    } catch (error) {
      this.services.log.warn({ err: error, thread: approval.threadKey }, 'approval prompt not updated');
    }
  }

  private async endOpen(threadKey: string, status: 'denied' | 'cancelled', by: string): Promise<PendingApproval | undefined> {
    const pending = await this.book.pendingFor(threadKey);
    if (!pending) return undefined;
    const ended = await this.book.end(pending.id, status, by);
    if (!ended) return undefined;
    void this.disarm(ended.id);
    await this.showOutcome(ended);
    return ended;
  }

  /** An expired question: its work resumes with the expiry, then the prompt says so. */
  private async ended(approval: PendingApproval, how: ApprovalResumption): Promise<void> {
    void this.disarm(approval.id);
    this.resume(approval, how);
    await this.showOutcome(approval);
  }

  /** An expiry timer fired: the question ends as expired unless it was answered first (on any instance). */
  private async expire(id: string): Promise<void> {
    const ended = await this.book.end(id, 'expired');
    if (ended) await this.ended(ended, { kind: 'expired' });
  }

  /** Starts the timers once, before the first is armed. */
  private startTimers(): Promise<void> {
    this.timersStarted ??= this.timers.start((id) => {
      const expiring = this.expire(id);
      this.track(expiring);
      return expiring;
    });
    return this.timersStarted;
  }

  private async armExpiry(approval: PendingApproval): Promise<void> {
    if (this.closed) return;
    const arming = (async () => {
      await this.startTimers();
      await this.timers.arm(approval.id, approval.expiresAt);
    })().catch((error: unknown) => {
      // The question stays open: the next start re-arms it, and a press still answers it.
      this.services.log.error({ err: error, thread: approval.threadKey }, 'approval expiry not armed');
    });
    this.arming.add(arming);
    await arming;
    this.arming.delete(arming);
  }

  private disarm(id: string): Promise<void> {
    return this.timers.disarm(id);
  }

  /** A private notice to the presser; cosmetic, so a failure is only logged. */
  private async notify(event: InboundApprovalAnswer, text: string): Promise<void> {
    try {
      await event.respond({ text, private: true });
    } catch (error) {
      this.services.log.warn({ err: error, channel: event.chat.channel }, 'approval notice not shown');
    }
  }
}

/** What the presser of a button that answered is told. */
const ANSWER_NOTICES = { approved: 'Approved.', denied: 'Denied.', continue: 'Continuing.', stop: 'Stopping.', redirect: 'Trying another way.' } as const;

/** How an answered question resumes its work. */
function resumptionOf(approval: PendingApproval): ApprovalResumption {
  switch (approval.status) {
    case 'continued':
      return { kind: 'loop', choice: 'continue' };
    case 'stopped':
      return { kind: 'loop', choice: 'stop' };
    case 'redirected':
      return { kind: 'loop', choice: 'redirect' };
    case 'denied':
      return { kind: 'denied' };
    default:
      return { kind: 'approved', always: approval.status === 'always' };
  }
}

/** The outcome view of an approval's status, for editing its prompt. */
export function outcomeOf(approval: PendingApproval): ApprovalOutcome {
  const decision = approval.status === 'pending' ? 'cancelled' : approval.status;
  const outcome: ApprovalOutcome = approval.decidedBy ? { decision, by: approval.decidedBy } : { decision };
  // An unanswered loop question stops the turn; an unanswered approval runs nothing.
  if (decision === 'expired') outcome.expiredAs = approval.kind === 'loop' ? 'stop' : 'denied';
  return outcome;
}

function refusalText(claim: Extract<ClaimResult, { ok: false }>): string {
  if (claim.reason === 'not_requester') return `Only ${claim.approval?.requester.name ?? 'the person who asked'} can answer this.`;
  return PRESS_NOTICES[claim.reason];
}
