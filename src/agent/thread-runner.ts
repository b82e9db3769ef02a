/**
 * The runner of one thread: at most one turn at a time. Messages that arrive
 * while a turn runs are injected into it; messages that arrive while it waits
 * for a slot join it; an answered approval resumes it. Nothing is dropped.
 */
import type { ChatInfo, InboundMessage, Sender } from '../channels/types.js';
import { qualifiedUserId } from '../channels/types.js';
import { promptOf, type PendingApproval } from './approvals.js';
import type { TurnState } from './chat-delegate.js';
import { TurnPresenter } from './presenter.js';
import type { FairSemaphore } from './semaphore.js';
import { TurnStopped, type StopReason } from './turn-stopped.js';
import type { AgentServices } from './services.js';
import { outcomeOf, TurnEngine, type ApprovalResumption } from './turn.js';

/** Work queued for the thread. */
type Work = { kind: 'messages' } | { kind: 'resume'; approval: PendingApproval; how: ApprovalResumption };

/** The runner of one thread. */
export class ThreadRunner {
  private readonly queue: InboundMessage[] = [];
  private readonly resumes: Work[] = [];
  private active: TurnState | undefined;
  /** The unit of work in progress, from its first moment (before the turn state is loaded). */
  private current: { abort: AbortController; inject: InboundMessage[] } | undefined;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];
  /** Set on shutdown: no new work starts. */
  private closed = false;
  private chat: ChatInfo;

  constructor(
    readonly key: string,
    chat: ChatInfo,
    private readonly services: AgentServices,
    private readonly engine: TurnEngine,
    private readonly slots: FairSemaphore,
  ) {
    this.chat = chat;
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

  /** Takes a person's message: injected into the running turn, or queued for the next. */
  accept(message: InboundMessage): void {
    if (this.closed) return;
    this.chat = message.chat;
    if (this.current && !this.current.abort.signal.aborted) {
      this.current.inject.push(message);
      return;
    }
    this.queue.push(message);
    this.schedule();
  }

  /** Resumes the turn after its approval was answered or expired. */
  resume(approval: PendingApproval, how: ApprovalResumption): void {
    if (this.closed) return;
    this.resumes.push({ kind: 'resume', approval, how });
    this.schedule();
  }

  /**
   * Interrupts the running turn (LLM request and tools aborted) and drops queued
   * work. Returns whether anything was running or waiting.
   */
  stop(reason: StopReason = 'user'): boolean {
    const hadWork = Boolean(this.current) || this.queue.length > 0 || this.resumes.length > 0;
    this.queue.length = 0;
    for (const work of this.resumes.splice(0)) {
      // An answered approval that never got to run still needs its results in the history.
      if (work.kind === 'resume') void this.services.history.update(this.key, this.chat, (record) => TurnEngine.cancelResults(record, work.approval));
    }
    if (this.current) {
      this.current.inject.length = 0;
      this.current.abort.abort(new TurnStopped(reason));
    }
    return hadWork;
  }

  /** Stops for good (shutdown): the running turn is interrupted and nothing new starts. */
  close(): void {
    this.stop('shutdown');
    this.closed = true;
  }

  /** Resolves once no turn runs or waits. */
  idle(): Promise<void> {
    if (!this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.slots.run(() => this.runNext()).finally(() => {
      this.scheduled = false;
      if (this.queue.length || this.resumes.length) this.schedule();
      else for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  /** Runs one unit of work; the slot is released between turns so other threads get their turn. */
  private async runNext(): Promise<void> {
    const work: Work | undefined = this.resumes.shift() ?? (this.queue.length ? { kind: 'messages' } : undefined);
    if (!work) return;
    // From here on, new messages join this work instead of waiting for the next turn.
    this.current = { abort: new AbortController(), inject: [] };
    try {
      if (work.kind === 'resume') await this.runResume(work.approval, work.how);
      else await this.runMessages();
    } catch (error) {
      this.services.log.error({ err: error, thread: this.key }, 'thread runner failed');
    } finally {
      if (this.current.inject.length && !this.current.abort.signal.aborted) this.queue.unshift(...this.current.inject.splice(0));
      this.active = undefined;
      this.current = undefined;
    }
  }

  private async runMessages(): Promise<void> {
    const messages = this.queue.splice(0);
    const last = messages[messages.length - 1]!;
    const pending = await this.services.approvals.pendingFor(this.key);
    if (pending) {
      // A new message while an approval waits counts as Deny and continues the turn with it.
      const ended = await this.services.approvals.end(pending.id, 'denied', last.sender.name);
      if (ended) {
        await this.showOutcome(ended);
        await this.runResume(ended, { kind: 'superseded', messages }, last.sender);
        return;
      }
    }
    const turn = await this.newTurn(last.sender);
    await this.engine.start(turn, messages);
  }

  private async runResume(approval: PendingApproval, how: ApprovalResumption, speaker?: Sender): Promise<void> {
    const turn = await this.newTurn(speaker ?? approval.requester, approval.userId);
    await this.engine.resume(turn, approval, how);
  }

  private async newTurn(speaker: Sender, userId?: string): Promise<TurnState> {
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
      presenter: new TurnPresenter(this.services.outbox, this.chat, capabilities),
      iteration: 0,
    };
    this.active = turn;
    return turn;
  }

  private async showOutcome(approval: PendingApproval): Promise<void> {
    const shown = await this.services.approvals.promptLocation(approval);
    if (shown) await this.services.outbox.resolveApproval(shown, promptOf(approval), outcomeOf(approval));
  }
}
