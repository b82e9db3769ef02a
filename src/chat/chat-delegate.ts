/**
 * The chat consumer of the engine (IronClaw's ChatDelegate): one person's
 * message in one thread. It offers the tools this person may use here, streams
 * the reply, runs tool batches through the pipeline, turns the first call that
 * needs approval into a pending approval, and takes messages that arrive
 * mid-turn as injected input.
 */
import type { ChatInfo, InboundMessage, Sender } from '../channels/types.js';
import { LlmError } from '../errors.js';
import type { LlmProvider, LlmResponse, ToolCall, ToolDefinition } from '../llm/types.js';
import type { CallResult, ToolContext } from '../tools/types.js';
import { workspaceDirFor } from '../tools/builtin/index.js';
import { newApproval, newLoopQuestion, type PendingApproval } from '../engine/approval-book.js';
import { compactHistory, estimateTokens } from '../engine/compaction.js';
import { repairHistory } from '../engine/history-repair.js';
import { checkClaims, claimsCorrection } from '../engine/guards/claims.js';
import type { LoopFinding } from '../engine/guards/loop-detector.js';
import { settleBatch } from '../engine/settle-batch.js';
import { fileOutlet } from '../engine/file-outlet.js';
import { addressOf } from '../engine/delivery.js';
import { LAST_TOOL_ROUND_NOTICE, loopStoppedMessage, roundsExhaustedMessage } from '../engine/guards/notices.js';
import { filesWrittenThisTurn } from '../engine/guards/turn-writes.js';
import type { ThreadRecord } from '../engine/history.js';
import { inboxId } from '../engine/inbox.js';
import { userMessagesFor } from './inbound-format.js';
import { receiveTurnFiles, rememberFiles } from './attachments/turn-files.js';
import { TurnImages } from './attachments/turn-images.js';
import type { BatchOutcome, LoopContext, LoopDelegate, LoopOutcome, LoopSignal, TextAction } from '../engine/loop.js';
import type { TurnPresenter } from './presenter.js';
import type { FinalizedReply } from '../engine/reasoning.js';
import type { GuardFired, TurnCause, TurnEnd } from '../engine/events.js';
import type { AgentServices } from '../engine/services.js';
import { buildSystemPrompt } from './system-prompt.js';
import { stillHeld } from './turn-stopped.js';
import { addUsage } from '../engine/usage.js';
import { meteredProvider } from '../engine/metered-call.js';

/** Result text of a call that did not start because the user wrote again. */
export const SKIPPED_FOR_NEW_MESSAGE = 'Skipped: the user sent a new message before this call started. Read it first.';

/** Why a chat turn ended early without the model's answer. */
export type ChatFailure = 'cost_limit';

/** The live state of one turn, shared between the runner and the delegate. */
export interface TurnState {
  record: ThreadRecord;
  chat: ChatInfo;
  speaker: Sender;
  /** Qualified id of the person the turn answers. */
  userId: string;
  abort: AbortController;
  /** Messages that arrived during the turn, waiting to be injected. */
  inject: InboundMessage[];
  /** Inbox ids of the messages this turn has read; they leave the inbox when the turn saves. */
  consumed: string[];
  presenter: TurnPresenter;
  /** The loop iteration running now (1-based), for /status. */
  iteration: number;
  /** The sending of the turn's last message, awaited by the runner outside the turn slot. */
  delivery?: Promise<void>;
  /** In a group, the platform id of the latest message the turn answers (the answer replies to it). */
  replyTo?: string;
  /** The platform id of the latest message the turn answers, in any chat (SendOptions.after). */
  answering?: string;
  /** What started this unit of work, and when. */
  cause: TurnCause;
  startedAt: number;
  /** How it ended, once it has. */
  outcome?: TurnEnd;
  /** It goes on from a turn a crash interrupted: its answer may have gone out already, in part. */
  resumed?: boolean;
}

/** The chat delegate of one turn. */
export class ChatDelegate implements LoopDelegate<PendingApproval> {
  private iterations = 0;
  private warnedLastRound = false;
  /** Tool definitions and system prompts of this turn, kept while policy and permissions stay the same. */
  private offered: { revision: string; tools: ToolDefinition[]; prompts: Map<string, string> } | undefined;
  private compactedForError = false;
  private turnImages: TurnImages | undefined;

  constructor(
    private readonly turn: TurnState,
    private readonly services: AgentServices,
  ) {}

  /** Iterations run so far in this turn. */
  get iterationCount(): number {
    return this.iterations;
  }

  /** The tool context of this turn. */
  toolContext(): ToolContext {
    const { chat, speaker, userId, abort } = this.turn;
    return {
      userId,
      userName: speaker.name,
      threadKey: this.turn.record.key,
      channel: chat.channel,
      scope: chat.scope,
      approval: { kind: 'chat', chatKind: chat.kind },
      ...this.outlet(),
      signal: abort.signal,
      log: this.services.log,
    };
  }

  /**
   * Where files_send sends: this chat, each file named for the turn and what
   * it is. The turn's id stays the same through its approvals and a
   * restart's resumption, and is new for each turn people start.
   */
  private outlet(): Pick<ToolContext, 'outlet'> {
    const { chat, record } = this.turn;
    const turn = `${record.key}:${record.turnId ?? record.turns}`;
    const outlet = fileOutlet(this.services.outbox, addressOf(chat), turn, this.services.config.attachments.maxBytes, this.turn.replyTo);
    return outlet ? { outlet } : {};
  }

  isStopped(): boolean {
    return this.turn.abort.signal.aborted;
  }

  async checkSignals(): Promise<LoopSignal> {
    if (this.isStopped()) return { type: 'stop' };
    if (!this.turn.inject.length) return { type: 'continue' };
    const arrived = this.turn.inject.splice(0);
    const files = await receiveTurnFiles(this.services, this.turn.chat, arrived);
    rememberFiles(this.turn.record, files.saved);
    const open = this.turn.record.turn;
    if (files.quote && open) open.preface = open.preface ? `${open.preface}\n${files.quote}` : files.quote;
    this.turn.consumed.push(...arrived.map(inboxId));
    const last = arrived[arrived.length - 1]!;
    this.turn.speaker = last.sender;
    this.turn.answering = last.messageId;
    if (this.turn.chat.kind === 'group') this.turn.replyTo = last.messageId;
    return { type: 'inject', messages: userMessagesFor(arrived, this.turn.chat.kind, [], files, this.turn.record.turns) };
  }

  async beforeLlmCall(ctx: LoopContext, iteration: number): Promise<LoopOutcome<PendingApproval> | undefined> {
    this.iterations = iteration;
    this.turn.iteration = iteration;
    const { config } = this.services;
    const max = config.agent.maxToolIterations;
    ctx.tools = await this.currentTools();
    if (iteration >= max) ctx.forceText = true;
    else if (iteration === max - 1 && !this.warnedLastRound) {
      this.warnedLastRound = true;
      ctx.messages.push({ role: 'user', content: LAST_TOOL_ROUND_NOTICE });
    }
    const system = this.systemPrompt(ctx);
    // The same message while its text stays the same: its redacted wire form is then made once a turn, not once a call.
    if (ctx.messages[0]?.role !== 'system' || ctx.messages[0].content !== system) ctx.messages[0] = { role: 'system', content: system };
    const history = ctx.messages.slice(1);
    const repaired = repairHistory(history);
    if (repaired !== history) {
      this.services.log.warn({ thread: this.turn.record.key }, 'history had tool calls without results; repaired before the model call');
      ctx.messages.splice(1, ctx.messages.length - 1, ...repaired);
    }
    if (estimateTokens(await this.images().forRequest(ctx.messages)) > config.agent.maxContextTokens * config.agent.compactThreshold) {
      await this.compact(ctx);
    }
    return undefined;
  }

  async callLlm(ctx: LoopContext, _iteration: number, continuing = false): Promise<LlmResponse> {
    const { presenter } = this.turn;
    if (continuing) presenter.continueReply();
    else presenter.beginReply();
    let raw: LlmResponse;
    try {
      raw = await this.request(ctx);
    } catch (error) {
      if (!(error instanceof LlmError) || error.kind !== 'context_length' || this.compactedForError) throw error;
      this.compactedForError = true;
      this.services.log.warn({ thread: this.turn.record.key }, 'context too long for the model; compacting and retrying');
      await this.compact(ctx, true);
      presenter.beginReply();
      raw = await this.request(ctx);
    }
    addUsage(this.turn.record.usage, raw);
    // The rounds are judged on the calls the model made; the loop cleans the reply afterwards.
    return this.withinRounds(raw);
  }

  async onReply({ response, anomaly }: FinalizedReply): Promise<void> {
    if (anomaly) this.services.log.warn({ thread: this.turn.record.key, anomaly }, 'model reply replaced by a fallback');
    if (response.toolCalls.length) await this.turn.presenter.endReplyWithTools();
  }

  /**
   * A reply that still calls tools after the last tool round, with nothing to
   * say, becomes the honest note that the rounds ran out (the calls are not run).
   */
  private withinRounds(response: LlmResponse): LlmResponse {
    const rounds = this.services.config.agent.maxToolIterations;
    if (this.iterations < rounds || !response.toolCalls.length || response.content.trim()) return response;
    return { ...response, toolCalls: [], content: roundsExhaustedMessage(rounds), finishReason: 'stop' };
  }

  handleTextResponse(text: string): TextAction<PendingApproval> {
    return { action: 'return', outcome: { type: 'response', text } };
  }

  async executeToolCalls(calls: ToolCall[], content: string, ctx: LoopContext): Promise<BatchOutcome<PendingApproval>> {
    // The thread's lease lapsed: it is another instance's now, and none of these calls runs here.
    if (!(await stillHeld(this.turn, this.services.history))) return { outcome: { type: 'stopped' }, allFailed: false, allSucceeded: false };
    ctx.messages.push({ role: 'assistant', content: content || null, toolCalls: calls });
    // A batch with side effects is journaled before any call runs: after a crash
    // its calls are reported to the model as interrupted instead of being run a
    // second time. Read-only calls may simply run again and cost no write.
    if (calls.some((call) => this.services.registry.get(call.name)?.tool.readOnly === false)) {
      this.turn.record.messages = ctx.messages.slice(1);
      await this.services.history.save(this.turn.record, { consumed: this.turn.consumed });
    }
    this.turn.presenter.toolsStarted(calls.map((call) => call.name));
    const results = await this.services.pipeline.runBatch(calls, this.toolContext(), {
      beforeStart: () => (this.turn.inject.length ? SKIPPED_FOR_NEW_MESSAGE : undefined),
    });
    this.turn.presenter.toolsFinished();
    const { batch, waiting } = settleBatch(results, ctx);
    if (!waiting.length) return batch;
    return { ...batch, outcome: { type: 'need_approval', pending: this.pendingFor(waiting, content) } };
  }

  /** A loop guard acted on this turn: told to whoever follows the thread (metrics, the console). */
  onGuard(fired: GuardFired): void {
    this.services.events.emit('guard', { thread: this.turn.record.key, ...fired });
  }

  /**
   * A loop the model did not leave after it was told: in a DM the person is
   * asked (Continue, Stop, Try another way); in a group the turn stops and says
   * what was repeating.
   */
  onLoopDetected(finding: LoopFinding, calls: ToolCall[]): LoopOutcome<PendingApproval> {
    const { record, speaker, userId, chat } = this.turn;
    this.services.log.warn({ thread: record.key, detector: finding.detector }, 'the model is going in circles');
    const asks = chat.kind === 'dm';
    this.onGuard({ action: asks ? 'question' : 'stopped', guard: finding.detector, summary: finding.summary });
    if (!asks) return { type: 'response', text: loopStoppedMessage(finding.summary) };
    const question = newLoopQuestion(
      { threadKey: record.key, chat: record.chat, requester: speaker, userId, call: calls[calls.length - 1]!, detail: finding.summary },
      this.services.config.agent.approvalTimeoutMs,
    );
    return { type: 'need_approval', pending: question };
  }

  /**
   * Checks a final answer's claims about the workspace: a file it says it
   * wrote that no call of this turn wrote, or a `path:line` that does not exist.
   */
  async reviewAnswer(text: string, ctx: LoopContext): Promise<string | undefined> {
    const { config } = this.services;
    if (!config.agent.loopGuards.verifyActions) return undefined;
    const writes = filesWrittenThisTurn(ctx.messages);
    const problems = await checkClaims(text, writes.files, workspaceDirFor(config, this.toolContext()), { writesUnknown: writes.opaque });
    if (!problems.length) return undefined;
    this.services.log.info({ thread: this.turn.record.key, problems: problems.length }, 'answer makes claims the workspace does not bear out; asking for a correction');
    return claimsCorrection(problems);
  }

  private pendingFor(waiting: CallResult[], content: string): PendingApproval {
    const [first, ...rest] = waiting;
    const { record, speaker, userId } = this.turn;
    return newApproval(
      {
        threadKey: record.key,
        chat: record.chat,
        requester: speaker,
        userId,
        call: first!.call,
        deferred: rest.map((result) => result.call),
        view: first!.approval,
        reason: content,
      },
      this.services.config.agent.approvalTimeoutMs,
    );
  }

  /** The images of this turn's requests: sent to a model that sees, each prepared once. */
  private images(): TurnImages {
    const { attachments } = this.services.config;
    this.turnImages ??= new TurnImages(
      (path) => {
        const saved = this.turn.record.attachments?.find((entry) => entry.path === path);
        return saved ? this.services.attachments.bytesOf(this.turn.chat, saved) : Promise.resolve(undefined);
      },
      { vision: this.services.models.seesImages(this.turn.record.model), turn: this.turn.record.turns, keepTurns: attachments.keepImages, maxPixels: attachments.maxImagePixels },
      this.services.log,
    );
    return this.turnImages;
  }

  /** The provider of the model this conversation runs on (`/model`). */
  private provider(): LlmProvider {
    return this.services.models.providerFor(this.turn.record.model);
  }

  /** The provider of this turn's model, its calls booked against the person's daily limit and counted as theirs. */
  private metered(purpose: 'reply' | 'compaction'): LlmProvider {
    return meteredProvider(this.services, this.provider(), { userId: this.turn.userId, thread: this.turn.record.key, purpose });
  }

  private async request(ctx: LoopContext): Promise<LlmResponse> {
    const { presenter, abort } = this.turn;
    return this.metered('reply').complete({
      messages: await this.images().forRequest(ctx.messages),
      ...(ctx.forceText || !ctx.tools.length ? {} : { tools: ctx.tools }),
      signal: abort.signal,
      ...(this.services.config.llm.stream ? { onTextDelta: (delta: string) => presenter.textDelta(delta) } : {}),
    });
  }

  private async compact(ctx: LoopContext, force = false): Promise<void> {
    const keep = this.services.config.agent.keepRecentMessages;
    const history = ctx.messages.slice(1);
    const { messages: compacted, response } = await compactHistory(history, this.metered('compaction'), { keep: force ? Math.min(keep, 4) : keep, signal: this.turn.abort.signal });
    // The summary is a model call of this turn: it counts in the thread's usage too.
    if (response) addUsage(this.turn.record.usage, response);
    if (compacted !== history) {
      this.services.log.info({ thread: this.turn.record.key, before: history.length, after: compacted.length }, 'history compacted');
      ctx.messages.splice(1, ctx.messages.length - 1, ...compacted);
      this.services.events.emit('compaction', { thread: this.turn.record.key, before: history.length, after: compacted.length, forced: force });
    }
  }

  /** The tools offered now: recomputed only when an admin, the user or a tool source changed something. */
  private async currentTools(): Promise<ToolDefinition[]> {
    const { policy, permissions, pipeline, registry } = this.services;
    // A change made on another instance moves the revisions here before the model is shown the tools.
    await Promise.all([policy.refresh(), permissions.refresh()]);
    const revision = `${policy.revision()}:${permissions.revision()}:${registry.revision()}`;
    if (this.offered?.revision !== revision) {
      this.offered = { revision, tools: await pipeline.definitions(this.toolContext()), prompts: new Map() };
    }
    return this.offered.tools;
  }

  private systemPrompt(ctx: LoopContext): string {
    const key = `${ctx.forceText || !ctx.tools.length}|${this.turn.speaker.name}`;
    const prompts = this.offered?.prompts;
    const prompt = prompts?.get(key) ?? this.buildPrompt(ctx);
    prompts?.set(key, prompt);
    return prompt;
  }

  private buildPrompt(ctx: LoopContext): string {
    const { config } = this.services;
    return buildSystemPrompt({
      agentName: config.agent.name,
      extra: config.agent.systemPrompt,
      chat: this.turn.chat,
      speaker: this.turn.speaker,
      tools: ctx.forceText ? [] : ctx.tools,
      selfCheck: config.agent.loopGuards.selfCheck,
      now: new Date(),
    });
  }
}
