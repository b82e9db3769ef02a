/**
 * The outer event loop: merges every channel's stream of inbound events and
 * dispatches each to its thread's runner (messages), the approval book (button
 * presses) or the command handler (control path, never behind a turn). It ends
 * on shutdown or when every channel stream has ended; nothing else ends it.
 */
import type { Channel, ChatInfo, InboundEvent, InboundMessage } from '../channels/types.js';
import { acknowledge, qualifiedUserId, threadKeyOf } from '../channels/types.js';
import { ChannelError } from '../errors.js';
import { ApprovalFlow } from '../engine/approval-flow.js';
import { CommandHandler } from './commands.js';
import { textCommand } from './command-table.js';
import { fromQueued, keepInInbox } from '../engine/inbox.js';
import { keepAsGroupContext } from './inbound-format.js';
import { InboundLimiter, queueFullText } from '../engine/inbound-limits.js';
import { intakeShared } from './shared-intake.js';
import { FairSemaphore } from '../engine/semaphore.js';
import type { AgentServices } from '../engine/services.js';
import { jobEngineFor } from '../jobs/engine.js';
import { RoutineScheduler } from '../routines/scheduler.js';
import { timersFor } from '../store/timers.js';
import type { ClusterThreads } from '../cluster/threads.js';
import { jobIdOfThread } from '../jobs/job-runs.js';
import { JobScheduler } from '../jobs/scheduler.js';
import { ThreadRunner, type RunnerContext, type StopResult } from './thread-runner.js';
import { describeThread } from './thread-status.js';
import type { TurnJournal } from '../engine/turn-journal.js';
import { TurnEngine } from './turn.js';

/** The running agent. */
export class Runtime {
  private readonly channels = new Map<string, Channel>();
  private readonly runners = new Map<string, ThreadRunner>();
  private readonly slots: FairSemaphore;
  private readonly engine: TurnEngine;
  private readonly commands: CommandHandler;
  private readonly limiter: InboundLimiter;
  private readonly journal: TurnJournal;
  private readonly runnerContext: RunnerContext;
  private readonly approvals: ApprovalFlow;
  /** Background jobs. */
  readonly jobs: JobScheduler;
  /** Channels that started, by name (for readiness). */
  private readonly started = new Set<string>();
  /** Routines: reminders and scheduled work. */
  readonly routines: RoutineScheduler;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Threads shared with other instances on the Redis store, when there are any. */
  private readonly cluster: ClusterThreads | undefined;
  private stopping: Promise<void> | undefined;
  private resolveDone!: (reason: string) => void;
  /** Resolves with the reason once the runtime has stopped. */
  readonly done: Promise<string>;

  constructor(
    private readonly services: AgentServices,
    channels: Channel[],
  ) {
    for (const channel of channels) this.channels.set(channel.name, channel);
    this.cluster = services.cluster?.threads;
    const { agent } = services.config;
    this.slots = new FairSemaphore(agent.maxConcurrentTurns);
    // An ended question resumes the work that asked it: a job, or the turn in its thread's runner.
    this.approvals = new ApprovalFlow(
      services,
      (approval, how) => {
        if (jobIdOfThread(approval.threadKey)) this.track(this.jobs.resume(approval, how));
        else this.runnerFor(approval.threadKey, approval.chat).resume(approval, how);
      },
      (work) => this.track(work),
      timersFor(services.config.storeUrl, 'pincer-approval-expiry', services.log),
    );
    this.jobs = new JobScheduler(
      services,
      services.jobs,
      {
        ask: (approval) => this.approvals.ask(approval),
        cancelQuestion: async (threadKey, by) => {
          const ended = await this.approvals.cancel(threadKey, by);
          if (ended) await this.approvals.showOutcome(ended);
        },
      },
      jobEngineFor(services.config, services.log),
    );
    this.routines = new RoutineScheduler(
      services,
      services.routines,
      services.firingClaims,
      timersFor(services.config.storeUrl, 'pincer-routines', services.log),
      () => this.jobs,
    );
    this.engine = new TurnEngine(services, this.approvals);
    this.journal = services.journal;
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
        // Shared threads go back to the instances once their inbox is empty.
        if (this.cluster) this.track(this.cluster.idle(runner.key));
      },
    };
    if (this.cluster) {
      const cluster = this.cluster;
      this.runnerContext.claim = (key) => cluster.claim(key);
    }
    this.limiter = new InboundLimiter(agent.userMessagesPerMinute, agent.maxInboundChars);
    this.commands = new CommandHandler({
      services,
      senderRate: services.cluster?.senderRate ?? this.limiter,
      channel: (name) => this.channels.get(name),
      stopThread: (key, by) => this.stopThread(key, by),
      threadIdle: async (key) => this.runners.get(key)?.idle(),
      describeThread: async (key) => describeThread(this.services, key, this.runners.get(key), await this.approvals.pendingFor(key)),
      shutdown: (reason) => void this.shutdown(reason),
      jobs: () => this.jobs,
      routines: () => this.routines,
    });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  /**
   * Starts every channel (one failing to start is logged, not fatal, unless all
   * fail), re-arms the expiry of approvals pending from before a restart, and
   * begins consuming events.
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
    if (this.services.cluster) this.joinCluster(this.services.cluster);
    else await this.recover();
    await this.jobs.start();
    await this.routines.start();
    void Promise.all(started.map((channel) => this.consume(channel))).then(() => this.shutdown('every channel stream ended'));
  }

  /**
   * Picks up the work the previous process left unfinished: turns it died in
   * (or a shutdown paused) and messages it had accepted but not answered.
   * Before any new event is read, so each thread keeps its order.
   */
  private async recover(): Promise<void> {
    for (const key of await this.journal.load()) {
      try {
        await this.recoverThread(key);
      } catch (error) {
        this.services.log.error({ err: error, thread: key }, 'could not resume the thread after the restart');
      }
    }
  }

  /**
   * Shares threads with the other instances: a thread taken over is picked up
   * as after a restart, new inbox entries go to its runner, and a /stop or a
   * settings change made on another instance applies here.
   */
  private joinCluster({ node, threads }: NonNullable<AgentServices['cluster']>): void {
    const { history } = this.services;
    node.onMessage((message) => {
      if (message.type === 'stop' && threads.holds(message.thread)) this.runners.get(message.thread)?.stop();
    });
    threads.start({
      takeOver: (key) => this.recoverThread(key),
      deliver: (key, entries) => {
        const runner = this.runnerFor(key, entries[0]!.chat);
        for (const entry of entries) runner.accept(fromQueued(entry.message, entry.chat));
      },
      busy: (key) => this.runners.get(key)?.busy ?? false,
      spare: () => this.slots.running < this.services.config.agent.maxConcurrentTurns,
      forget: (key) => history.forget(key),
      flush: (key) => history.flushThread(key),
      lost: (key) => {
        this.runners.get(key)?.abandon();
        this.runners.delete(key);
        history.forget(key);
      },
    });
  }

  /** Resumes a thread's unfinished work (an interrupted turn, waiting messages); the ids of the messages queued. */
  private async recoverThread(key: string): Promise<string[]> {
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
    // Taking a shared thread with messages waiting is routine; a turn left open by a dead instance is not.
    const routine = this.cluster !== undefined && !open;
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
    const approvalsClosed = this.approvals.close();
    for (const runner of this.runners.values()) runner.close();
    const deadline = new Promise((resolve) => setTimeout(resolve, config.agent.shutdownTimeoutMs).unref());
    // Running jobs stop where they are and resume at the next start; routines' next firings wait.
    await Promise.race([Promise.all([this.idle(), approvalsClosed, this.jobs.stop(), this.routines.stop()]), deadline]);
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
    if (event.type !== 'message' || textCommand(event) || !this.isAddressed(event)) {
      this.services.log.debug({ channel: event.chat.channel, type: event.type }, 'event during shutdown not handled');
      return false;
    }
    if (this.cluster) {
      // Kept in the shared inbox: another instance (or this one after its restart) answers it.
      this.track(this.cluster.intake(event).finally(() => acknowledge(event)));
      return true;
    }
    const key = threadKeyOf(event.chat);
    this.track(keepInInbox(this.services, key, event));
    return false;
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
    const command = textCommand(event);
    if (command) {
      this.track(this.commands.handle(command));
      return false;
    }
    const key = threadKeyOf(event.chat);
    if (!this.isAddressed(event)) {
      this.track(this.keepAsContext(key, event));
      return false;
    }
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    const shared = this.services.cluster;
    if (shared) {
      // Durable first, the sender's rate counted in Redis for all instances; the thread's holder (or the first free one) reads it.
      this.track(intakeShared(this.services, shared, event, userId, this.limiter.checkSize(event.text)?.refusal));
      return true;
    }
    const limited = this.limiter.check(userId, event.text);
    if (limited) {
      if (limited.notify) this.track(this.services.outbox.send(event.chat, limited.refusal.text));
      return false;
    }
    const runner = this.runnerFor(key, event.chat);
    if (runner.queuedMessages >= this.services.config.agent.maxQueuedPerThread) {
      this.track(this.services.outbox.send(event.chat, queueFullText(runner.queuedMessages)));
      return false;
    }
    runner.accept(event);
    return false;
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
    if (this.services.cluster && !this.services.cluster.threads.holds(key)) {
      // The thread may be working on another instance: its holder stops it.
      await this.services.cluster.node.publish({ type: 'stop', thread: key, by: byName });
    }
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
