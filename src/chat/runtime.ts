/**
 * The outer event loop: merges every channel's stream of inbound events and
 * dispatches each to its thread's runner (messages), the approval book (button
 * presses) or the command handler (control path, never behind a turn). It ends
 * on shutdown or when every channel stream has ended; nothing else ends it.
 */
import type { Channel, ChatInfo, CommandSpec, InboundCommand, InboundEvent, InboundMessage } from '../channels/types.js';
import { acknowledge, qualifiedUserId, threadKeyOf } from '../channels/types.js';
import type { Deployment, ThreadHost } from '../deployment/types.js';
import { ApprovalFlow, type ResumeWork } from '../engine/approval-flow.js';
import type { Feature, FeatureCommand } from '../engine/feature.js';
import { FairSemaphore } from '../engine/semaphore.js';
import type { AgentServices } from '../engine/services.js';
import type { TurnJournal } from '../engine/turn-journal.js';
import { ChannelError } from '../errors.js';
import { CommandHandler } from './commands.js';
import { commandTable, textCommand } from './command-table.js';
import { keepAsGroupContext } from './inbound-format.js';
import { ThreadRunner, type RunnerContext, type StopResult } from './thread-runner.js';
import { describeThread } from './thread-status.js';
import { TurnEngine } from './turn.js';

/** What the runtime runs besides the channels: how it is deployed, and the features plugged into it. */
export interface RuntimeParts {
  deployment: Deployment;
  features: readonly Feature[];
}

/** The running agent. */
export class Runtime {
  private readonly channels = new Map<string, Channel>();
  private readonly runners = new Map<string, ThreadRunner>();
  private readonly slots: FairSemaphore;
  private readonly engine: TurnEngine;
  private readonly commands: CommandHandler;
  /** Every command, the features' included. */
  readonly commandTable: CommandSpec[];
  private readonly journal: TurnJournal;
  private readonly runnerContext: RunnerContext;
  private readonly approvals: ApprovalFlow;
  private readonly deployment: Deployment;
  private readonly features: readonly Feature[];
  /** Who resumes the work waiting on an approval, by the approval's `work.kind` (none: a chat turn). */
  private readonly resumers = new Map<string, ResumeWork>();
  /** Channels that started, by name (for readiness). */
  private readonly started = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();
  private stopping: Promise<void> | undefined;
  private resolveDone!: (reason: string) => void;
  /** Resolves with the reason once the runtime has stopped. */
  readonly done: Promise<string>;

  constructor(
    private readonly services: AgentServices,
    channels: Channel[],
    { deployment, features }: RuntimeParts,
  ) {
    for (const channel of channels) this.channels.set(channel.name, channel);
    this.deployment = deployment;
    this.features = features;
    const { agent } = services.config;
    this.slots = new FairSemaphore(agent.maxConcurrentTurns);
    for (const feature of features) if (feature.resumes) this.resumers.set(feature.resumes.kind, feature.resumes.resume);
    // An ended question resumes the work that asked it: a feature's (a job), or the turn in its thread's runner.
    this.approvals = new ApprovalFlow(
      services,
      (approval, how) => {
        const work = approval.work ? this.resumers.get(approval.work.kind) : undefined;
        if (approval.work) work?.(approval, how);
        else this.runnerFor(approval.threadKey, approval.chat).resume(approval, how);
      },
      (work) => this.track(work),
      deployment.timers('pincer-approval-expiry'),
    );
    this.engine = new TurnEngine(services, this.approvals);
    this.journal = services.journal;
    const intake = deployment.intake;
    this.runnerContext = {
      services,
      approvals: this.approvals,
      engine: this.engine,
      slots: this.slots,
      journal: this.journal,
      // An idle thread costs nothing: its runner is made again by its next event.
      onIdle: (runner) => {
        if (this.runners.get(runner.key) !== runner) return;
        this.runners.delete(runner.key);
        this.journal.clear(runner.key);
        // A shared thread goes back to the instances once its inbox is empty.
        this.track(intake.idle(runner.key));
      },
    };
    if (intake.claim) this.runnerContext.claim = intake.claim.bind(intake);
    const featureCommands = new Map<string, FeatureCommand>(features.flatMap((feature) => (feature.commands ?? []).map((command) => [command.spec.name, command] as const)));
    this.commandTable = commandTable([...featureCommands.values()].map((command) => command.spec));
    this.commands = new CommandHandler({
      services,
      senderRate: deployment.senderRate,
      channel: (name) => this.channels.get(name),
      stopThread: (key, by) => this.stopThread(key, by),
      threadIdle: async (key) => this.runners.get(key)?.idle(),
      describeThread: async (key) => describeThread(this.services, key, this.runners.get(key), await this.approvals.pendingFor(key)),
      shutdown: (reason) => void this.shutdown(reason),
      commands: this.commandTable,
      featureCommands,
    });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /**
   * Starts every channel (one failing to start is logged, not fatal, unless all
   * fail), re-arms the expiry of approvals pending from before a restart, picks
   * up the threads with unfinished work, starts the features, and begins
   * consuming events.
   */
  async start(): Promise<void> {
    const log = this.services.log;
    const started: Channel[] = [];
    await Promise.all(
      [...this.channels.values()].map(async (channel) => {
        try {
          await channel.start();
          started.push(channel);
          this.started.add(channel.name);
          log.info({ channel: channel.name }, 'channel started');
        } catch (error) {
          log.error({ err: error, channel: channel.name }, 'channel failed to start');
          this.channels.delete(channel.name);
        }
      }),
    );
    if (!started.length) throw new ChannelError('pincer', 'no channel could be started');
    await this.approvals.restore();
    this.deployment.signals.onStop((thread) => this.runners.get(thread)?.stop());
    // Before any new event is read, so that each thread keeps its order.
    await this.deployment.intake.start(this.threadHost());
    const host = {
      ask: (approval: Parameters<ApprovalFlow['ask']>[0]) => this.approvals.ask(approval),
      // Ending the question shows its outcome on the prompt.
      cancelQuestion: async (threadKey: string, by: string) => void (await this.approvals.cancel(threadKey, by)),
    };
    for (const feature of this.features) await feature.start(host);
    void Promise.all(started.map((channel) => this.consume(channel))).then(() => this.shutdown('every channel stream ended'));
  }

  /** How the intake hands threads to this runtime. */
  private threadHost(): ThreadHost {
    const { history } = this.services;
    return {
      takeOver: (key, handover) => this.recoverThread(key, handover),
      deliver: (key, messages, shared) => {
        if (shared.length) this.track(history.adopt(key, messages[0]!.chat, shared));
        const runner = this.runnerFor(key, messages[0]!.chat);
        for (const message of messages) runner.accept(message);
      },
      queued: (key) => this.runners.get(key)?.queuedMessages ?? 0,
      busy: (key) => this.runners.get(key)?.busy ?? false,
      spare: () => this.slots.running < this.services.config.agent.maxConcurrentTurns,
      forget: (key) => history.forget(key),
      flush: (key) => history.flushThread(key),
      lost: (key) => {
        this.runners.get(key)?.abandon();
        this.runners.delete(key);
        history.forget(key);
      },
      track: (work) => this.track(work),
    };
  }

  /** Resumes a thread's unfinished work (an interrupted turn, waiting messages); the ids of the messages queued. */
  private async recoverThread(key: string, handover: boolean): Promise<string[]> {
    const { history, log } = this.services;
    const record = await history.get(key);
    let open = record?.turn;
    if (record && open?.phase === 'running' && (await this.approvals.pendingFor(key))) {
      // The turn had asked for approval: the approval flow resumes it.
      await history.update(key, record.chat, (current) => delete current.turn);
      open = undefined;
    }
    if (!record || (!open && !record.inbox.length)) {
      this.journal.clear(key);
      return [];
    }
    // Taking over a shared thread with messages waiting is routine; a turn left open by a dead process is not.
    const routine = handover && !open;
    log[routine ? 'debug' : 'info']({ thread: key, interruptedTurn: Boolean(open), waitingMessages: record.inbox.length }, 'resuming unfinished work');
    this.runnerFor(key, record.chat).recover(open, record.inbox);
    return record.inbox.map((queued) => queued.id);
  }

  /** The thread runner for a key, if the thread has work in this process. */
  runner(key: string): ThreadRunner | undefined {
    return this.runners.get(key);
  }

  /**
   * Resolves once no event is being handled and no turn runs or waits, twice in
   * a row a few milliseconds apart (events still in a channel's stream are read
   * in between). For tests, benchmarks and shutdown.
   */
  async idle(): Promise<void> {
    let quiet = 0;
    while (quiet < 2) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const busy = this.inflight.size > 0 || [...this.runners.values()].some((runner) => runner.busy);
      if (!busy) {
        quiet += 1;
        continue;
      }
      quiet = 0;
      await Promise.all([...this.inflight, ...[...this.runners.values()].map((runner) => runner.idle())]);
    }
  }

  /** What the health endpoint reports: threads with a runner, messages waiting, channels that started, and whether it is stopping. */
  health(): { activeThreads: number; queuedMessages: number; channels: string[]; startedChannels: string[]; stopping: boolean } {
    let queued = 0;
    for (const runner of this.runners.values()) queued += runner.queuedMessages;
    return {
      activeThreads: this.runners.size,
      queuedMessages: queued,
      channels: [...this.channels.keys()],
      startedChannels: [...this.started],
      stopping: Boolean(this.stopping),
    };
  }

  /**
   * Runs a command event as if a channel had delivered it (the console's
   * changes): the same checks of who may, the same rules, and the answer
   * through the event's `respond`.
   */
  runCommand(event: InboundCommand): Promise<void> {
    return this.commands.handle(event);
  }

  /**
   * Graceful shutdown: stop intake, stop running turns, wait for them within the
   * deadline, disconnect channels, flush the store.
   */
  shutdown(reason: string): Promise<void> {
    this.stopping ??= this.stopAll(reason);
    return this.stopping;
  }

  private async stopAll(reason: string): Promise<void> {
    const { log, config } = this.services;
    log.info({ reason }, 'shutting down');
    // A thread taken now would start a turn that shutdown then waits for.
    this.deployment.intake.stopTaking?.();
    const approvalsClosed = this.approvals.close();
    for (const runner of this.runners.values()) runner.close();
    const deadline = new Promise((resolve) => setTimeout(resolve, config.agent.shutdownTimeoutMs).unref());
    // Features stop where they are (running jobs resume at the next start; routines' next firings wait).
    await Promise.race([Promise.all([this.idle(), approvalsClosed, ...this.features.map((feature) => feature.stop())]), deadline]);
    // Their turns stopped, the shared threads go to the other instances now, not when this process ends.
    await Promise.race([this.deployment.intake.giveBack?.(), deadline]);
    await Promise.race([Promise.allSettled([...this.channels.values()].map((channel) => channel.stop())), deadline]);
    // Messages that arrived while the channels were closing are kept for the next run.
    await Promise.race([Promise.allSettled([...this.inflight]), deadline]);
    this.resolveDone(reason);
  }

  private async consume(channel: Channel): Promise<void> {
    try {
      for await (const event of channel.events()) {
        // A press is acknowledged once stored, a shared thread's message once in its durable inbox; the rest now.
        const later = this.stopping ? this.keepForRestart(event) : this.dispatch(event);
        if (!later) acknowledge(event);
      }
    } catch (error) {
      this.services.log.error({ err: error, channel: channel.name }, 'channel stream failed');
    }
  }

  /**
   * During shutdown no turn starts, but a message the platform has already
   * handed over is not dropped: it goes to its thread's inbox and is answered
   * after the restart. Commands and presses are not kept (a press can be made
   * again; the prompt keeps its buttons).
   */
  private keepForRestart(event: InboundEvent): boolean {
    if (event.type !== 'message' || textCommand(event, this.commandTable) || !this.isAddressed(event)) {
      this.services.log.debug({ channel: event.chat.channel, type: event.type }, 'event during shutdown not handled');
      return false;
    }
    // This process after its restart (or another instance) answers it.
    return this.deployment.intake.keep(event);
  }

  /** Routes one event. Synchronous up to the runner so per-thread order is kept. True: it acknowledges the event itself, once stored. */
  private dispatch(event: InboundEvent): boolean {
    this.services.events.emit('message.in', { channel: event.chat.channel, thread: threadKeyOf(event.chat), type: event.type });
    switch (event.type) {
      case 'command':
        this.track(this.commands.handle(event));
        return false;
      case 'approval':
        this.track(this.approvals.answer(event, () => acknowledge(event)));
        return true;
      case 'message':
        return this.onMessage(event);
    }
  }

  private onMessage(event: InboundMessage): boolean {
    const command = textCommand(event, this.commandTable);
    if (command) {
      this.track(this.commands.handle(command));
      return false;
    }
    const key = threadKeyOf(event.chat);
    if (!this.isAddressed(event)) {
      this.track(this.keepAsContext(key, event));
      return false;
    }
    // Kept durably first, counted against its sender's rate and its thread's queue; the thread's holder reads it.
    return this.deployment.intake.accept(event, qualifiedUserId(event.chat.channel, event.sender.id));
  }

  private isAddressed(event: InboundMessage): boolean {
    return event.chat.kind === 'dm' || event.mentionsBot || event.replyToBot || this.services.config.agent.groupActivation === 'always';
  }

  private runnerFor(key: string, chat: ChatInfo): ThreadRunner {
    let runner = this.runners.get(key);
    if (!runner) {
      runner = new ThreadRunner(key, chat, this.runnerContext);
      this.runners.set(key, runner);
    }
    return runner;
  }

  private async keepAsContext(key: string, event: InboundMessage): Promise<void> {
    const keep = this.services.config.agent.groupContextMessages;
    if (keep === 0 || !event.text.trim()) return;
    await this.services.history.update(key, event.chat, (record) => keepAsGroupContext(record, [event], keep));
  }

  private async stopThread(key: string, byName: string): Promise<StopResult> {
    // The thread may be working on another instance: its holder stops it.
    if (!this.deployment.intake.holds(key)) await this.deployment.signals.stop(key, byName);
    const result = this.runners.get(key)?.stop() ?? { hadWork: false, kept: 0 };
    const ended = await this.approvals.cancel(key, byName);
    if (!ended) return result;
    await this.services.history.update(key, ended.chat, (record) => TurnEngine.cancelResults(record, ended));
    return { ...result, hadWork: true };
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error: unknown) => this.services.log.error({ err: error }, 'event handling failed'));
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }
}
