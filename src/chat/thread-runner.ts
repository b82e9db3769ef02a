/**
 * The runner of one thread: at most one turn at a time. Messages that arrive
 * while a turn runs are injected into it, and messages that arrive while it
 * waits for a slot join it, as far as they are the turn's to read (in a group,
 * only its speaker's: see turn-batch.ts); an answered approval resumes it; a
 * turn the process died in is resumed after the restart. Every accepted
 * message is kept in the thread's inbox until it is in the history: nothing is
 * dropped, by a crash, a shutdown or /stop.
 */
import type { ChatInfo, InboundMessage, Sender } from '../channels/types.js';
import { qualifiedUserId } from '../channels/types.js';
import type { PendingApproval } from '../engine/approval-book.js';
import type { ApprovalFlow, ApprovalResumption } from '../engine/approval-flow.js';
import type { TurnState } from './chat-delegate.js';
import type { TurnCause } from '../engine/events.js';
import type { OpenTurn, QueuedMessage } from '../engine/history.js';
import { fromQueued, inboxId, insertInOrder } from '../engine/inbox.js';
import { keepAsGroupContext, userMessagesFor } from './inbound-format.js';
import { TurnPresenter } from './presenter.js';
import type { FairSemaphore } from '../engine/semaphore.js';
import { TurnStopped, type StopReason } from './turn-stopped.js';
import { joinsRunningTurn, takeTurnBatch } from './turn-batch.js';
import type { AgentServices } from '../engine/services.js';
import type { TurnJournal } from '../engine/turn-journal.js';
import { TurnEngine } from './turn.js';

/** Work queued for the thread. */
type Work =
  | { kind: 'messages'; batch: InboundMessage[] }
  | { kind: 'resume'; approval: PendingApproval; how: ApprovalResumption }
  | { kind: 'recover'; open: OpenTurn };

/** What {@link ThreadRunner.stop} did. */
export interface StopResult {
  /** Whether a turn was running or work was waiting. */
  hadWork: boolean;
  /** Messages that had not been read yet, now kept in the history for the next turn. */
  kept: number;
}

/** What a runner needs besides the agent's services. */
export interface RunnerContext {
  services: AgentServices;
  approvals: ApprovalFlow;
  engine: TurnEngine;
  slots: FairSemaphore;
  journal: TurnJournal;
  /** Called when the runner has nothing left to do (the runtime may forget it). */
  onIdle(runner: ThreadRunner): void;
  /** Waits until this instance may work on the thread (it holds the thread's lease); false: never (shutdown). */
  claim?(key: string): Promise<boolean>;
}

/** The runner of one thread. */
export class ThreadRunner {
  private readonly queue: InboundMessage[] = [];
  private readonly resumes: Work[] = [];
  private active: TurnState | undefined;
  /** The unit of work in progress, from its first moment (before the turn state is loaded), and whom it acts for. */
  private current: { abort: AbortController; inject: InboundMessage[]; speaker: Sender } | undefined;
  /** Messages a /stop left unread; written to the history once the stopped turn has saved. */
  private readonly unread: InboundMessage[] = [];
  private scheduled = false;
  /** The last turn's final message still being sent (it may wait for pacing, outside the slot). */
  private delivery: Promise<void> | undefined;
  /** A turn ended since the last delivery was awaited (its delivery, if any, is reported next). */
  private reported = false;
  private idleWaiters: (() => void)[] = [];
  /** Set on shutdown: no new work starts. */
  private closed = false;
  private chat: ChatInfo;
  private readonly services: AgentServices;

  constructor(
    readonly key: string,
    chat: ChatInfo,
    private readonly context: RunnerContext,
  ) {
    this.chat = chat;
    this.services = context.services;
  }

  /** Whether a turn is running or waiting for a slot. */
  get busy(): boolean {
    return this.scheduled;
  }

  /** The running turn's iteration, for /status. */
  get running(): TurnState | undefined {
    return this.active;
  }

  /** Messages waiting for the next turn. */
  get queuedMessages(): number {
    return this.queue.length + (this.current?.inject.length ?? 0);
  }

  /** Takes a person's message, already kept in the thread's inbox by the intake: injected into the running turn when it is the turn's to read, or queued. */
  accept(message: InboundMessage): void {
    if (this.closed) return;
    this.chat = message.chat;
    const current = this.current;
    if (current && !current.abort.signal.aborted && joinsRunningTurn(this.chat.kind, current.speaker, message, this.queue)) {
      insertInOrder(current.inject, message);
      return;
    }
    insertInOrder(this.queue, message);
    this.schedule();
  }

  /** Resumes the turn after its approval was answered or expired. */
  resume(approval: PendingApproval, how: ApprovalResumption): void {
    if (this.closed) return;
    this.context.journal.mark(this.key);
    this.resumes.push({ kind: 'resume', approval, how });
    this.schedule();
  }

  /**
   * Picks up what the previous process left: the turn it died in (resumed
   * first) and the messages it had accepted (already in the inbox).
   */
  recover(open: OpenTurn | undefined, inbox: readonly QueuedMessage[]): void {
    if (this.closed) return;
    this.context.journal.mark(this.key);
    if (open) this.resumes.push({ kind: 'recover', open });
    for (const queued of inbox) insertInOrder(this.queue, fromQueued(queued, this.chat));
    this.schedule();
  }

  /**
   * Interrupts the running turn (LLM request and tools aborted). On /stop,
   * nothing new runs and the messages not read yet go into the history, to be
   * read with the next message; on shutdown (or a handover) they stay in the
   * inbox and run after the restart (or on the instance that took over).
   */
  stop(reason: StopReason = 'user'): StopResult {
    const hadWork = Boolean(this.current) || this.queue.length > 0 || this.resumes.length > 0;
    for (const work of this.resumes.splice(0)) {
      // An answered approval that never got to run still needs its results in the history.
      if (work.kind === 'resume') void this.services.history.update(this.key, this.chat, (record) => TurnEngine.cancelResults(record, work.approval));
    }
    let kept = 0;
    if (reason === 'user') {
      const unread = [...(this.current?.inject.splice(0) ?? []), ...this.queue.splice(0)];
      kept = unread.length;
      if (this.current) this.unread.push(...unread);
      else if (unread.length) void this.keepUnread(unread);
    } else {
      this.queue.length = 0;
    }
    this.current?.abort.abort(new TurnStopped(reason));
    return { hadWork, kept };
  }

  /** Stops for good (shutdown): the running turn is interrupted and nothing new starts. */
  close(): void {
    this.stop('shutdown');
    this.closed = true;
  }

  /** Stops for good without a word: the thread's lease was lost, and its new holder carries on. */
  abandon(): void {
    this.stop('handover');
    this.closed = true;
  }

  /** Resolves once no turn runs or waits. */
  idle(): Promise<void> {
    if (!this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    void this.context.slots
      .run(() => this.runNext())
      .then(() => this.delivered())
      .finally(() => {
        this.scheduled = false;
        if (!this.closed && (this.queue.length || this.resumes.length)) {
          this.schedule();
          return;
        }
        for (const resolve of this.idleWaiters.splice(0)) resolve();
        if (!this.closed) this.context.onIdle(this);
      });
  }

  /** Waits until the last turn's final message is sent: the thread's next work comes after it. */
  private async delivered(): Promise<void> {
    const delivery = this.delivery;
    this.delivery = undefined;
    try {
      await delivery;
    } catch (error) {
      this.services.log.error({ err: error, thread: this.key }, 'final message of a turn not delivered');
    }
    if (this.reported) this.services.events.emit('turn.delivered', { thread: this.key });
    this.reported = false;
  }

  /** Runs one unit of work; the slot is released between turns so other threads get their turn. */
  private async runNext(): Promise<void> {
    if (this.closed) return;
    if (!this.resumes.length && !this.queue.length) return;
    if (this.context.claim && !(await this.context.claim(this.key))) {
      // Never (this instance is shutting down): the work stays in the shared inbox for whoever takes the thread.
      // Returning with the work still queued would schedule it again at once, for ever.
      this.abandon();
      return;
    }
    const work: Work | undefined = this.resumes.shift() ?? (this.queue.length ? { kind: 'messages', batch: takeTurnBatch(this.queue, this.chat.kind) } : undefined);
    if (!work) return;
    // From here on, new messages of the work's speaker join it instead of waiting for the next turn.
    this.current = { abort: new AbortController(), inject: [], speaker: speakerOf(work) };
    try {
      if (work.kind === 'resume') await this.runResume(work.approval, work.how);
      else if (work.kind === 'recover') await this.runRecover(work.open);
      else await this.runMessages(work.batch);
    } catch (error) {
      this.services.log.error({ err: error, thread: this.key }, 'thread runner failed');
    } finally {
      if (this.active) this.reportEnd(this.active);
      if (this.current.inject.length && !this.current.abort.signal.aborted) this.queue.unshift(...this.current.inject.splice(0));
      this.delivery = this.active?.delivery;
      const unread = this.unread.splice(0);
      if (unread.length) await this.keepUnread(unread);
      this.active = undefined;
      this.current = undefined;
    }
  }

  private async runMessages(messages: InboundMessage[]): Promise<void> {
    const last = messages[messages.length - 1]!;
    // A new message while an approval waits counts as Deny and continues the turn with it.
    const superseded = await this.context.approvals.supersede(this.key, last.sender.name);
    if (superseded) {
      await this.runResume(superseded, { kind: 'superseded', messages }, last.sender);
      return;
    }
    const turn = await this.newTurn('messages', last.sender);
    await this.context.engine.start(turn, messages);
  }

  private async runResume(approval: PendingApproval, how: ApprovalResumption, speaker?: Sender): Promise<void> {
    const turn = await this.newTurn(how.kind === 'superseded' ? 'messages' : 'resume', speaker ?? approval.requester, approval.userId);
    await this.context.engine.resume(turn, approval, how);
  }

  private async runRecover(open: OpenTurn): Promise<void> {
    const turn = await this.newTurn('recover', open.speaker, open.userId);
    if (open.replyTo !== undefined) turn.replyTo = open.replyTo;
    // Messages that waited in the inbox would have been read by the interrupted turn (as far as they are its speaker's); one that came meanwhile may be later.
    for (const message of takeTurnBatch(this.queue, this.chat.kind, open.speaker)) insertInOrder(turn.inject, message);
    await this.context.engine.recover(turn, open);
  }

  /**
   * Writes messages a /stop left unread into the history (they leave the inbox
   * in the same write): in a DM to be read with the person's next message; in a
   * group as context lines only, since the next turn acts for whoever speaks next.
   */
  private async keepUnread(messages: InboundMessage[]): Promise<void> {
    const ids = new Set(messages.map(inboxId));
    await this.services.history.update(this.key, this.chat, (record) => {
      if (this.chat.kind === 'group') keepAsGroupContext(record, messages, this.services.config.agent.groupContextMessages);
      else record.messages.push(...userMessagesFor(messages, this.chat.kind, []));
      record.inbox = record.inbox.filter((queued) => !ids.has(queued.id));
    });
  }

  private async newTurn(cause: TurnCause, speaker: Sender, userId?: string): Promise<TurnState> {
    const current = this.current!;
    const record = await this.services.history.load(this.key, this.chat);
    const channel = this.services.outbox.channelOf(this.chat);
    const capabilities = channel?.capabilities ?? { maxMessageLength: 4000, minEditIntervalMs: 1000, typingIntervalMs: 0 };
    const turn: TurnState = {
      record,
      chat: this.chat,
      speaker,
      userId: userId ?? qualifiedUserId(this.chat.channel, speaker.id),
      abort: current.abort,
      inject: current.inject,
      consumed: [],
      presenter: new TurnPresenter(this.services.outbox, this.chat, capabilities),
      iteration: 0,
      cause,
      startedAt: Date.now(),
    };
    this.active = turn;
    this.services.events.emit('turn.started', { thread: this.key, userId: turn.userId, cause });
    return turn;
  }

  /** Reports the end of a unit of work; one that threw before it ended counts as an error. */
  private reportEnd(turn: TurnState): void {
    this.reported = true;
    this.services.events.emit('turn.ended', {
      thread: this.key,
      userId: turn.userId,
      cause: turn.cause,
      outcome: turn.outcome ?? 'error',
      iterations: turn.iteration,
      durationMs: Date.now() - turn.startedAt,
    });
  }
}

/** Whom a unit of work acts for: the sender of its messages, the person who was asked, or the speaker of the interrupted turn. */
function speakerOf(work: Work): Sender {
  if (work.kind === 'messages') return work.batch[0]!.sender;
  return work.kind === 'resume' ? work.approval.requester : work.open.speaker;
}
