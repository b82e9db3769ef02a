/**
 * One turn of a chat thread: from the person's message (or an answered
 * approval) to the final message the person sees. Every outcome ends with a
 * message: the answer, a short honest note, or an approval prompt.
 */
import { randomUUID } from 'node:crypto';
import type { InboundMessage } from '../channels/types.js';
import { UsageLimitError } from '../errors.js';
import { failureMessage } from '../engine/failures.js';
import { toolResult } from '../llm/call-ids.js';
import type { ChatMessage } from '../llm/types.js';
import { newApproval, type PendingApproval } from '../engine/approval-book.js';
import type { ApprovalFlow, ApprovalResumption } from '../engine/approval-flow.js';
import { runApprovedCall } from '../engine/approved-call.js';
import { ChatDelegate, type ChatFailure, type TurnState } from './chat-delegate.js';
import type { OpenTurn, ThreadRecord } from '../engine/history.js';
import { loopStoppedMessage, roundsExhaustedMessage } from '../engine/guards/notices.js';
import { inboxId } from '../engine/inbox.js';
import { userMessagesFor } from './inbound-format.js';
import { sendAnswerImages } from './attachments/answer-images.js';
import { receiveTurnFiles, rememberFiles } from './attachments/turn-files.js';
import { runAgenticLoop, type LoopContext, type LoopOutcome } from '../engine/loop.js';
import type { AgentServices } from '../engine/services.js';
import { answerOptions, interruptedResults, openTurn, prefaceName, RESTART_NOTICE, restartNoticeName, SHUTDOWN_NOTICE, shownAnswer } from './turn-restart.js';
import { takeSaid } from '../engine/delivery.js';
import { stillHeld, TurnStopped } from './turn-stopped.js';

/** Tool results written when an approval ends without running its call. */
export const APPROVAL_RESULTS = {
  denied: 'Denied by the user: this action was not run. Do not try it again unless the user asks.',
  expired: 'The approval request expired without an answer, so this action was not run.',
  cancelled: 'Cancelled: the user stopped this turn before answering, so this action was not run.',
  superseded: 'Not run: the user sent a new message instead of answering the approval request.',
  deferredSkipped: 'Not run: an earlier action of the same batch was not approved.',
} as const;

/** What the model and the person are told when a loop question is answered. */
export const LOOP_ANSWERS = {
  redirect:
    'The user saw that you were repeating yourself and asked you to try another way. Do not repeat the calls you already made: ' +
    'take a different approach, or tell the user what is blocking you.',
  stopped: loopStoppedMessage,
} as const;

/** Runs turns. */
export class TurnEngine {
  constructor(
    private readonly services: AgentServices,
    private readonly approvals: ApprovalFlow,
  ) {}

  /** A turn started by people's messages. */
  async start(turn: TurnState, messages: InboundMessage[]): Promise<void> {
    const { record } = turn;
    turn.answering = messages[messages.length - 1]?.messageId;
    if (turn.chat.kind === 'group') turn.replyTo = turn.answering;
    const open = openTurn(turn);
    const read = new Set(messages.map(inboxId));
    // Downloads and transcriptions take a while: the person sees the bot typing meanwhile.
    if (messages.some((message) => message.attachments.length)) turn.presenter.start();
    // The files are fetched now, while the messages are still in the inbox: a crash meanwhile fetches them again.
    const files = await receiveTurnFiles(this.services, turn.chat, messages, record).catch((error: unknown) => {
      turn.presenter.close();
      throw error;
    });
    // What a voice message was heard as goes on top of the answer; the journal keeps it for a resumed turn.
    if (files.quote) open.preface = files.quote;
    record.turn = open;
    // One write moves the messages from the inbox into the history and opens the
    // turn's journal, before the model is asked: a crash during the call then finds
    // the turn open, and the person is told after the restart.
    await this.services.history.update(
      record.key,
      turn.chat,
      (current) => {
        // What the bot said meanwhile (a job's result, a reminder) comes before what the person says now.
        current.messages.push(...takeSaid(current), ...userMessagesFor(messages, turn.chat.kind, current.groupContext, files, current.turns + 1));
        rememberFiles(current, files.saved);
        current.inbox = current.inbox.filter((queued) => !read.has(queued.id));
        current.groupContext = [];
        current.turns += 1;
        current.turnId = randomUUID();
        current.turn = open;
      },
    );
    await this.loop(turn);
  }

  /**
   * Resumes a turn the previous process died in: an answer it was sending is
   * sent; otherwise the person is told, calls that were running are reported to
   * the model as interrupted (never run again blindly), and the loop goes on.
   */
  async recover(turn: TurnState, open: OpenTurn): Promise<void> {
    const { record } = turn;
    this.services.log.info({ thread: record.key, phase: open.phase }, 'resuming a turn interrupted by a restart');
    if (open.phase === 'delivering' && open.answer !== undefined) {
      turn.outcome = 'response';
      // A streamed answer replaces its draft: an edit, which no platform shows twice.
      if (open.draft) turn.presenter.adoptDraft(open.draft);
      // The same key as the first attempt: a platform that recognises it does not post the answer twice.
      const options = answerOptions(turn, record.key, open);
      await turn.presenter.finish(shownAnswer(open, open.answer), { ...options, resumed: true });
      await sendAnswerImages(open.answer, this.services, () => new ChatDelegate(turn, this.services).toolContext());
      delete record.turn;
      await this.save(turn);
      await this.services.outbox.forget(options.idempotencyKey);
      return;
    }
    record.turn = { ...open, phase: 'running' };
    delete record.turn.answer;
    delete record.turn.draft;
    // The answer may have gone out before the crash with the journal not yet saying so.
    turn.resumed = true;
    record.messages.push(...interruptedResults(record.messages));
    await this.save(turn);
    // A reply that was streaming when the process died would stay half-written, marked in progress: the notice replaces it.
    if (open.draft) await this.services.outbox.edit({ chat: turn.chat, ids: open.draft }, RESTART_NOTICE);
    else await this.services.outbox.deliver(turn.chat, RESTART_NOTICE, restartNoticeName(record.key, open), turn.replyTo ? { replyTo: turn.replyTo } : {});
    await this.loop(turn);
  }

  /** Continues a turn whose approval was answered (or expired, or overtaken by a new message). */
  async resume(turn: TurnState, approval: PendingApproval, how: ApprovalResumption): Promise<void> {
    if (approval.kind === 'loop') return this.resumeLoop(turn, approval, how);
    const { record } = turn;
    if (how.kind === 'superseded') turn.consumed.push(...how.messages.map(inboxId));
    // The open turn is the journal: a crash during the approved call resumes the turn
    // with the call reported as interrupted, not run a second time.
    record.turn = openTurn(turn);
    const delegate = new ChatDelegate(turn, this.services);
    const first = await this.resultFor(turn, approval, how, delegate);
    record.messages.push(first);
    const remaining = [...approval.deferred];
    if (how.kind !== 'approved') {
      const text = how.kind === 'superseded' ? APPROVAL_RESULTS.superseded : APPROVAL_RESULTS.deferredSkipped;
      record.messages.push(...remaining.map((call) => toolResult(call, text)));
      remaining.length = 0;
    }
    while (remaining.length) {
      if (!(await stillHeld(turn, this.services.history))) {
        turn.presenter.close();
        return;
      }
      if (turn.abort.signal.aborted) {
        // Stopped while the approved call ran: the rest of the batch is cancelled, not asked.
        turn.outcome = 'stopped';
        record.messages.push(...remaining.map((rest) => toolResult(rest, APPROVAL_RESULTS.cancelled)));
        this.closeJournal(turn);
        await this.save(turn);
        turn.presenter.close();
        return;
      }
      const call = remaining.shift()!;
      turn.presenter.toolsStarted([call.name]);
      const result = await this.services.pipeline.run(call, delegate.toolContext());
      turn.presenter.toolsFinished();
      if (result.status === 'needs_approval') {
        const next = newApproval({ ...approval, call: result.call, deferred: remaining, view: result.approval, reason: undefined }, this.services.config.agent.approvalTimeoutMs);
        await this.save(turn);
        await this.ask(turn, next);
        return;
      }
      record.messages.push(toolResult(call, result.content));
    }
    if (how.kind === 'superseded') await this.readSuperseding(turn, how.messages);
    await this.save(turn);
    await this.loop(turn);
  }

  /**
   * Continues a turn after its loop question: Continue runs the loop again
   * with fresh detectors, Try another way adds a note to the model first, and
   * Stop (or no answer in time) ends the turn with what was repeating. A new
   * message instead of an answer is read as the person's direction.
   */
  private async resumeLoop(turn: TurnState, question: PendingApproval, how: ApprovalResumption): Promise<void> {
    const { record } = turn;
    if (how.kind === 'superseded') turn.consumed.push(...how.messages.map(inboxId));
    record.turn = openTurn(turn);
    const choice = how.kind === 'loop' ? how.choice : how.kind === 'superseded' ? 'continue' : 'stop';
    if (choice === 'stop') {
      turn.outcome = 'response';
      const text = LOOP_ANSWERS.stopped(question.summary);
      record.messages.push({ role: 'assistant', content: text });
      await this.finish(turn, text);
      return;
    }
    if (choice === 'redirect') record.messages.push({ role: 'user', content: LOOP_ANSWERS.redirect });
    if (how.kind === 'superseded') await this.readSuperseding(turn, how.messages);
    await this.save(turn);
    await this.loop(turn);
  }

  /** Writes the messages that came instead of an answer into the history, their files received. */
  private async readSuperseding(turn: TurnState, messages: InboundMessage[]): Promise<void> {
    const files = await receiveTurnFiles(this.services, turn.chat, messages);
    turn.record.messages.push(...userMessagesFor(messages, turn.chat.kind, [], files, turn.record.turns));
    rememberFiles(turn.record, files.saved);
    if (files.quote && turn.record.turn) turn.record.turn.preface = files.quote;
  }

  /** Writes results for an approval cancelled by /stop so the history stays well formed (a loop question has none to write). */
  static cancelResults(record: ThreadRecord, approval: PendingApproval): void {
    if (approval.kind === 'loop') return;
    record.messages.push(toolResult(approval.call, APPROVAL_RESULTS.cancelled));
    record.messages.push(...approval.deferred.map((call) => toolResult(call, APPROVAL_RESULTS.cancelled)));
  }

  private async loop(turn: TurnState): Promise<void> {
    const { config } = this.services;
    const ctx: LoopContext = { messages: [{ role: 'system', content: '' }, ...turn.record.messages], tools: [], forceText: false };
    const delegate = new ChatDelegate(turn, this.services);
    turn.presenter.onDraft = (ids) => this.journalDraft(turn, ids);
    turn.presenter.start();
    let outcome: LoopOutcome<PendingApproval>;
    try {
      outcome = await runAgenticLoop(delegate, ctx, {
        maxIterations: config.agent.maxToolIterations + 1,
        maxToolIntentNudges: config.agent.maxToolIntentNudges,
        maxContinuations: config.agent.loopGuards.maxContinuations,
        detectors: config.agent.loopGuards,
      });
    } catch (error) {
      turn.record.messages = ctx.messages.slice(1);
      // A model call the daily limit had no room for: the person is told, as at any limit.
      if (!(error instanceof UsageLimitError)) return this.fail(turn, error);
      outcome = { type: 'failure', reason: 'cost_limit' satisfies ChatFailure };
    } finally {
      turn.record.lastIteration = delegate.iterationCount;
    }
    turn.record.messages = ctx.messages.slice(1);
    if (outcome.type === 'need_approval' && turn.abort.signal.aborted) {
      // /stop came while the batch ran: no prompt after a stop.
      TurnEngine.cancelResults(turn.record, outcome.pending);
      outcome = { type: 'stopped' };
    }
    await this.deliver(turn, outcome);
  }

  private async deliver(turn: TurnState, outcome: LoopOutcome<PendingApproval>): Promise<void> {
    const { record, presenter } = turn;
    turn.outcome = outcome.type;
    this.services.log.debug({ thread: record.key, outcome: outcome.type, iterations: record.lastIteration }, 'turn ended');
    switch (outcome.type) {
      case 'response':
        record.messages.push({ role: 'assistant', content: outcome.text });
        await this.finish(turn, outcome.text);
        return;
      case 'stopped':
        // Handed over: the thread is another instance's now (its writes would be refused); it resumes the turn and speaks.
        if (stoppedBy(turn) === 'handover') {
          presenter.close();
          return;
        }
        this.closeJournal(turn);
        await this.save(turn);
        // A person who sent /stop has their confirmation; a shutdown owes them a word.
        if (stoppedBy(turn) === 'shutdown') await presenter.finish(SHUTDOWN_NOTICE, turn.replyTo ? { replyTo: turn.replyTo } : {});
        else presenter.close();
        return;
      case 'max_iterations': {
        const text = roundsExhaustedMessage(this.services.config.agent.maxToolIterations);
        record.messages.push({ role: 'assistant', content: text });
        await this.finish(turn, text);
        return;
      }
      case 'need_approval':
        await this.save(turn);
        await this.ask(turn, outcome.pending);
        return;
      case 'failure':
        await this.finish(turn, await this.failureText(turn, outcome.reason));
    }
  }

  /**
   * Sends the turn's last message with the journal in step: `delivering` (with
   * the text) before the send, closed after it. A crash in between sends it
   * again after the restart; none loses it. The writes need not hold up the
   * answer; they go out in order in the background.
   */
  private async finish(turn: TurnState, text: string): Promise<void> {
    const { record } = turn;
    const open: OpenTurn = { ...(record.turn ?? openTurn(turn)), phase: 'delivering', answer: text };
    record.turn = open;
    await this.save(turn, { wait: false });
    // The send may wait for the platform's pacing: the runner awaits it outside
    // the turn slot, so other threads are not held up meanwhile.
    turn.delivery = (async () => {
      // Not by an instance whose lease lapsed: the one that took the thread over sends it.
      if (!(await stillHeld(turn, this.services.history))) {
        turn.presenter.close();
        return;
      }
      const options = answerOptions(turn, record.key, open);
      await turn.presenter.finish(shownAnswer(open, text), options);
      await sendAnswerImages(text, this.services, () => new ChatDelegate(turn, this.services).toolContext());
      delete record.turn;
      await this.save(turn, { wait: false });
      // Once the closed turn is on record nothing sends this answer again, and the record of its parts can go.
      void this.services.history.flushThread(record.key).then(() => this.services.outbox.forget(options.idempotencyKey));
    })();
  }

  /** Names in the journal the message the reply is streaming into (or no longer): after a crash it is edited, not left behind. */
  private journalDraft(turn: TurnState, ids: readonly string[] | undefined): void {
    const open = turn.record.turn;
    if (!open) return;
    if (ids) open.draft = [...ids];
    else delete open.draft;
    void this.save(turn, { wait: false });
  }

  /** Ends the turn's journal, unless a shutdown stopped it: then it resumes after the restart. */
  private closeJournal(turn: TurnState): void {
    if (stoppedBy(turn) !== 'shutdown') delete turn.record.turn;
  }

  /** Saves the turn's record; inbox messages it has read leave the inbox in the same write. */
  private save(turn: TurnState, options: { wait?: boolean } = {}): Promise<ThreadRecord> {
    return this.services.history.save(turn.record, { ...options, consumed: turn.consumed });
  }

  private async ask(turn: TurnState, approval: PendingApproval): Promise<void> {
    turn.outcome = 'need_approval';
    turn.presenter.close();
    await this.showPreface(turn);
    if (await this.approvals.ask(approval)) {
      // From here the approval flow holds the turn; the journal can close.
      delete turn.record.turn;
      await this.save(turn, { wait: false });
      return;
    }
    // Nobody can answer a prompt that was never shown (the flow cancelled it): say so.
    TurnEngine.cancelResults(turn.record, approval);
    if (approval.kind === 'loop') {
      const text = loopStoppedMessage(approval.summary);
      turn.record.messages.push({ role: 'assistant', content: text });
      await this.finish(turn, text);
      return;
    }
    await this.finish(turn, `I needed your approval to run \`${approval.call.name}\`, but could not show the approval buttons here. Nothing was run; please try again.`);
  }

  /** A turn that ends in a prompt, not an answer, shows its preface on its own first (once, however often it is run). */
  private async showPreface(turn: TurnState): Promise<void> {
    const open = turn.record.turn;
    if (!open?.preface) return;
    await this.services.outbox.deliver(turn.chat, open.preface, prefaceName(turn.record.key, open), turn.replyTo ? { replyTo: turn.replyTo } : {});
    delete open.preface;
  }

  private async fail(turn: TurnState, error: unknown): Promise<void> {
    const { log } = this.services;
    log.error({ err: error, thread: turn.record.key }, 'turn failed');
    turn.outcome = 'error';
    await this.finish(turn, failureMessage(error));
  }

  private async failureText(turn: TurnState, reason: string): Promise<string> {
    if (reason !== 'cost_limit') return `I could not finish this: ${reason}.`;
    const spent = await this.services.usage.userToday(turn.userId);
    return `You have reached today's usage limit ($${this.services.config.agent.dailyCostLimitUsd.toFixed(2)}; spent $${spent.costUsd.toFixed(2)}). It resets at midnight UTC.`;
  }

  /** The first call's result: run once approved (see {@link runApprovedCall}), or the reason it was not. */
  private async resultFor(turn: TurnState, approval: PendingApproval, how: ApprovalResumption, delegate: ChatDelegate): Promise<ChatMessage> {
    const { presenter } = turn;
    if (how.kind !== 'approved') {
      await this.save(turn);
      presenter.start();
      // A tool approval never resumes with a loop answer; read one as a refusal all the same.
      return toolResult(approval.call, APPROVAL_RESULTS[how.kind === 'loop' ? 'denied' : how.kind]);
    }
    if (how.always) await this.services.permissions.set(approval.userId, approval.call.name, 'alwaysAllow');
    const result = await runApprovedCall(this.services.pipeline, approval.call, delegate.toolContext(), {
      started: async (call) => {
        await this.save(turn);
        // The approved call shows progress like any other: typing, then a status line with its elapsed time.
        presenter.start();
        presenter.toolsStarted([call.name]);
      },
      finished: async () => {
        presenter.toolsFinished();
      },
    });
    return toolResult(approval.call, result.content);
  }
}

/** Why the turn was stopped, if it was. */
function stoppedBy(turn: TurnState): TurnStopped['reason'] | undefined {
  const reason: unknown = turn.abort.signal.reason;
  return turn.abort.signal.aborted && reason instanceof TurnStopped ? reason.reason : undefined;
}

