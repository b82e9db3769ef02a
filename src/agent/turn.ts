/**
 * One turn of a chat thread: from the person's message (or an answered
 * approval) to the final message the person sees. Every outcome ends with a
 * message: the answer, a short honest note, or an approval prompt.
 */
import type { ApprovalOutcome, InboundMessage } from '../channels/types.js';
import { LlmError } from '../errors.js';
import type { ChatMessage, ToolCall } from '../llm/types.js';
import { ApprovalBook, promptOf, type PendingApproval } from './approvals.js';
import { ChatDelegate, type TurnState } from './chat-delegate.js';
import type { ThreadRecord } from './history.js';
import { userMessagesFor } from './inbound-format.js';
import { runAgenticLoop, type LoopContext, type LoopOutcome } from './loop.js';
import type { AgentServices } from './services.js';
import { TurnStopped } from './turn-stopped.js';

/** Tool results written when an approval ends without running its call. */
export const APPROVAL_RESULTS = {
  denied: 'Denied by the user: this action was not run. Do not try it again unless the user asks.',
  expired: 'The approval request expired without an answer, so this action was not run.',
  cancelled: 'Cancelled: the user stopped this turn before answering, so this action was not run.',
  superseded: 'Not run: the user sent a new message instead of answering the approval request.',
  deferredSkipped: 'Not run: an earlier action of the same batch was not approved.',
} as const;

/** How an approval came to be resumed. */
export type ApprovalResumption =
  | { kind: 'approved'; always: boolean }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'superseded'; messages: InboundMessage[] };

/** Called when a turn ends with a new pending approval (the runtime arms its expiry). */
export type ApprovalListener = (approval: PendingApproval) => void;

/** Runs turns. */
export class TurnEngine {
  constructor(
    private readonly services: AgentServices,
    private readonly onApproval: ApprovalListener,
  ) {}

  /** A turn started by people's messages. */
  async start(turn: TurnState, messages: InboundMessage[]): Promise<void> {
    const { record } = turn;
    if (turn.chat.kind === 'group') turn.replyTo = messages[messages.length - 1]?.messageId;
    // Written in the background: the model call need not wait for the disk, and the
    // turn's own save (awaited) comes after it in order.
    await this.services.history.update(
      record.key,
      turn.chat,
      (current) => {
        current.messages.push(...userMessagesFor(messages, turn.chat.kind, current.groupContext));
        current.groupContext = [];
        current.turns += 1;
      },
      { wait: false },
    );
    await this.loop(turn);
  }

  /** Continues a turn whose approval was answered (or expired, or overtaken by a new message). */
  async resume(turn: TurnState, approval: PendingApproval, how: ApprovalResumption): Promise<void> {
    const { record } = turn;
    const delegate = new ChatDelegate(turn, this.services);
    const first = await this.resultFor(approval, how, delegate);
    record.messages.push(first);
    const remaining = [...approval.deferred];
    if (how.kind !== 'approved') {
      const text = how.kind === 'superseded' ? APPROVAL_RESULTS.superseded : APPROVAL_RESULTS.deferredSkipped;
      record.messages.push(...remaining.map((call) => toolResult(call, text)));
      remaining.length = 0;
    }
    while (remaining.length) {
      if (turn.abort.signal.aborted) {
        // Stopped while the approved call ran: the rest of the batch is cancelled, not asked.
        record.messages.push(...remaining.map((rest) => toolResult(rest, APPROVAL_RESULTS.cancelled)));
        await this.services.history.save(record);
        turn.presenter.close();
        return;
      }
      const call = remaining.shift()!;
      const result = await this.services.pipeline.run(call, delegate.toolContext());
      if (result.status === 'needs_approval') {
        const next = { ...this.pendingFrom(approval, call, remaining), ...approvalView(result.approval) };
        await this.services.history.save(record);
        await this.ask(turn, next);
        return;
      }
      record.messages.push(toolResult(call, result.content));
    }
    if (how.kind === 'superseded') record.messages.push(...userMessagesFor(how.messages, turn.chat.kind, []));
    await this.services.history.save(record);
    await this.loop(turn);
  }

  /** Writes results for an approval cancelled by /stop so the history stays well formed. */
  static cancelResults(record: ThreadRecord, approval: PendingApproval): void {
    record.messages.push(toolResult(approval.call, APPROVAL_RESULTS.cancelled));
    record.messages.push(...approval.deferred.map((call) => toolResult(call, APPROVAL_RESULTS.cancelled)));
  }

  private async loop(turn: TurnState): Promise<void> {
    const { config } = this.services;
    const ctx: LoopContext = { messages: [{ role: 'system', content: '' }, ...turn.record.messages], tools: [], forceText: false };
    const delegate = new ChatDelegate(turn, this.services);
    turn.presenter.start();
    let outcome: LoopOutcome<PendingApproval>;
    try {
      outcome = await runAgenticLoop(delegate, ctx, {
        maxIterations: config.agent.maxToolIterations + 1,
        maxToolIntentNudges: config.agent.maxToolIntentNudges,
      });
    } catch (error) {
      turn.record.messages = ctx.messages.slice(1);
      await this.fail(turn, error);
      return;
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
    this.services.log.debug({ thread: record.key, outcome: outcome.type, iterations: record.lastIteration }, 'turn ended');
    switch (outcome.type) {
      case 'response':
        record.messages.push({ role: 'assistant', content: outcome.text });
        // The answer need not wait for the disk; the write follows in order.
        await this.services.history.save(record, { wait: false });
        await presenter.finish(outcome.text, turn.replyTo);
        return;
      case 'stopped':
        await this.services.history.save(record);
        // A person who sent /stop has their confirmation; a shutdown owes them a word.
        if (turn.abort.signal.reason instanceof TurnStopped && turn.abort.signal.reason.reason === 'shutdown') await presenter.finish(SHUTDOWN_NOTICE, turn.replyTo);
        else presenter.close();
        return;
      case 'max_iterations': {
        const text = `I stopped after ${this.services.config.agent.maxToolIterations} rounds of tool use without reaching an answer. Tell me how to narrow it down and I will continue.`;
        record.messages.push({ role: 'assistant', content: text });
        await this.services.history.save(record);
        await presenter.finish(text, turn.replyTo);
        return;
      }
      case 'need_approval':
        await this.services.history.save(record);
        await this.ask(turn, outcome.pending);
        return;
      case 'failure':
        await this.services.history.save(record);
        await presenter.finish(await this.failureText(turn, outcome.reason), turn.replyTo);
    }
  }

  private async ask(turn: TurnState, approval: PendingApproval): Promise<void> {
    turn.presenter.close();
    this.services.log.info({ thread: approval.threadKey, tool: approval.call.name, deferred: approval.deferred.length }, 'approval requested');
    await this.services.approvals.create(approval);
    const shown = await this.services.approvals.showPrompt(approval.id, () => this.services.outbox.sendApproval(approval.chat, promptOf(approval)));
    if (shown) {
      this.onApproval(approval);
      return;
    }
    // Nobody can answer a prompt that was never shown: cancel it and say so.
    await this.services.approvals.end(approval.id, 'cancelled');
    TurnEngine.cancelResults(turn.record, approval);
    await this.services.history.save(turn.record);
    await this.services.outbox.send(approval.chat, `I needed your approval to run \`${approval.call.name}\`, but could not show the approval buttons here. Nothing was run; please try again.`);
  }

  private async fail(turn: TurnState, error: unknown): Promise<void> {
    const { log } = this.services;
    log.error({ err: error, thread: turn.record.key }, 'turn failed');
    await this.services.history.save(turn.record);
    await turn.presenter.finish(failureMessage(error), turn.replyTo);
  }

  private async failureText(turn: TurnState, reason: string): Promise<string> {
    if (reason !== 'cost_limit') return `I could not finish this: ${reason}.`;
    const spent = await this.services.usage.userToday(turn.userId);
    return `You have reached today's usage limit ($${this.services.config.agent.dailyCostLimitUsd.toFixed(2)}; spent $${spent.costUsd.toFixed(2)}). It resets at midnight UTC.`;
  }

  private async resultFor(approval: PendingApproval, how: ApprovalResumption, delegate: ChatDelegate): Promise<ChatMessage> {
    if (how.kind !== 'approved') return toolResult(approval.call, APPROVAL_RESULTS[how.kind]);
    if (how.always) await this.services.permissions.set(approval.userId, approval.call.name, 'alwaysAllow');
    const result = await this.services.pipeline.run(approval.call, delegate.toolContext(), { approved: true });
    return toolResult(approval.call, result.content);
  }

  private pendingFrom(previous: PendingApproval, call: ToolCall, remaining: ToolCall[]): PendingApproval {
    const now = Date.now();
    const { reason: _reason, prompt: _prompt, decidedAt: _at, decidedBy: _by, ...rest } = previous;
    return {
      ...rest,
      id: ApprovalBook.newId(),
      call,
      deferred: [...remaining],
      createdAt: now,
      expiresAt: now + this.services.config.agent.approvalTimeoutMs,
      status: 'pending',
    };
  }
}

function approvalView(view: { allowAlways: boolean; displayArgs: string; summary: string } | undefined) {
  return view ? { allowAlways: view.allowAlways, displayArgs: view.displayArgs, summary: view.summary } : {};
}

function toolResult(call: ToolCall, content: string): ChatMessage {
  return { role: 'tool', toolCallId: call.id, content };
}

/** What people see when a shutdown interrupts their turn. */
export const SHUTDOWN_NOTICE = '⏹️ I have to stop here: the bot is restarting. Please send your message again in a minute.';

/** The short, honest message a person sees when a turn fails; details stay in the logs. */
export function failureMessage(error: unknown): string {
  if (error instanceof LlmError) {
    switch (error.kind) {
      case 'rate_limit':
        return 'Sorry, the language model is rate-limiting me right now and retries did not help. Please try again in a minute.';
      case 'auth':
        return 'Sorry, I cannot reach the language model: it rejected my credentials. The bot owner needs to check the API key.';
      case 'context_length':
        return 'Sorry, this conversation has grown too long for the model even after summarising. Use /new to start fresh.';
      case 'timeout':
      case 'connection':
      case 'server':
        return 'Sorry, the language model is not answering right now (it failed several times in a row). Please try again in a moment.';
      default:
        return 'Sorry, the language model returned an error I could not work around. Please try again.';
    }
  }
  return 'Sorry, something went wrong on my side while answering. Please try again.';
}

/** The outcome view of an approval status, for editing the prompt. */
export function outcomeOf(approval: PendingApproval): ApprovalOutcome {
  const decision = approval.status === 'pending' ? 'cancelled' : approval.status;
  return approval.decidedBy ? { decision, by: approval.decidedBy } : { decision };
}
