/**
 * Threads shared by the instances on one Redis. Whoever receives a message puts
 * it in the thread's inbox (durable, deduplicated by platform message id) and
 * offers the thread; the instance that takes the thread's lease reads the inbox
 * in order, runs the turns, renews the lease while it works and gives it back
 * when the inbox is empty. An instance takes a new thread only while it has a
 * free turn slot: a busy one keeps the thread's poke and takes it when a slot
 * frees (unless another instance took it first; waiting-threads.ts), so work
 * waits in Redis for the first free slot of any instance, not in one
 * instance's queue while another idles. A sweep takes over the threads whose
 * holder died: their lease lapsed with work left (an inbox entry, or a turn
 * still open), and the ones left waiting longer than a lease TTL (every
 * instance busy all that time).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { InboundMessage } from '../channels/types.js';
import { threadKeyOf } from '../channels/types.js';
import { toQueued } from '../engine/inbox.js';
import { RATE_NOTICE_EVERY_MS, RATE_WINDOW_MS } from '../engine/inbound-limits.js';
import type { Logger } from '../log.js';
import { CLUSTER_PREFIX, type ClusterNode, type HeldLease } from './node.js';
import { COUNT_SENDER, senderRateKeys } from './sender-rate.js';
import { inboxInOrder, leaseNameOf, threadKeys, type InboxEntry, type LeaseHolder } from './thread-storage.js';
import { WaitingThreads } from './waiting-threads.js';

/** Threads with work not finished by a lease holder. */
const OPEN = `${CLUSTER_PREFIX}open`;
/** How often an instance with every turn slot taken looks whether one freed up for a thread waiting. */
const SPARE_CHECK_MS = 20;
/** How long a platform message id is remembered against duplicates (a redelivery comes within minutes). */
const SEEN_TTL_SECONDS = 24 * 60 * 60;

/**
 * Puts an entry in KEYS[2] unless KEYS[1] (its message id) was seen, or its
 * sender's messages (and replied commands) of the last ARGV[5] ms (the sorted
 * set KEYS[4], see sender-rate.ts) reach ARGV[4] (0: no limit), or the inbox holds more than ARGV[8] entries already;
 * the thread joins the open set KEYS[3]. Entries stand in arrival order; readers
 * put them in the chat's order (see `inboxInOrder`). Returns {1} added, {0} seen, {-1, wait
 * ms, 1 when the sender is to be told (KEYS[5] marks that for ARGV[6] ms)}, or
 * {-2, entries waiting}.
 */
const INTAKE = `${COUNT_SENDER}
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return {0} end
local waiting = redis.call('LLEN', KEYS[2])
if waiting > tonumber(ARGV[8]) then return {-2, waiting} end
local refused = count_sender(KEYS[4], KEYS[5], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7])
if refused then return refused end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return {1}`;

/** How a message fared at intake. */
export type Intake = { kind: 'added' } | { kind: 'seen' } | { kind: 'limited'; retryAfterMs: number; notify: boolean } | { kind: 'full'; waiting: number };

/** The limits a message meets at intake, counted in Redis for the whole bot. */
export interface IntakeLimits {
  /** The sender, qualified by channel. */
  userId: string;
  /** The sender's messages a minute. */
  perMinute: number;
  /** Messages waiting in a thread's inbox beyond the one being answered. */
  maxQueued: number;
}

/** Gives the lease KEYS[1] back when ARGV[1] holds it and the inbox KEYS[2] is empty: 1 given back, 0 inbox not empty, -1 not held. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[3], ARGV[2])
return 1`;

/** What the coordinator asks of the runtime. */
export interface ThreadHost {
  /** Picks the thread up after its lease was taken: its open turn and its inbox. Returns the inbox ids it queued. */
  takeOver(thread: string): Promise<string[]>;
  /** Hands newly arrived inbox entries to the thread's runner, in order. */
  deliver(thread: string, entries: InboxEntry[]): void;
  /** Whether this instance has a free turn slot (a busy one leaves new threads to the others). */
  spare(): boolean;
  /** Whether the thread has a runner with work in this instance. */
  busy(thread: string): boolean;
  /** Drops what this instance remembers of the thread (another instance may write it next). */
  forget(thread: string): void;
  /** Resolves once the thread's writes made so far are stored (before its lease goes back). */
  flush(thread: string): Promise<void>;
  /** The lease was lost (it lapsed): the thread's work here stops at once, without a word. */
  lost(thread: string): void;
}

interface Held {
  lease: HeldLease;
  /** Inbox ids handed to the runner. */
  taken: Set<string>;
}

/** The coordinator of shared threads in this instance. */
export class ClusterThreads implements LeaseHolder {
  private readonly held = new Map<string, Held>();
  private readonly taking = new Map<string, Promise<boolean>>();
  /** Leases being given back (their writes flushed first). */
  private readonly releasing = new Map<string, Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Threads poked while every slot was taken. */
  private readonly waiting: WaitingThreads;
  private host: ThreadHost | undefined;
  private closed = false;
  /** Shutting down: no thread is taken any more. */
  private draining = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {
    this.waiting = new WaitingThreads({
      redis: () => node.redis,
      log,
      openSet: OPEN,
      spare: () => this.host?.spare() ?? false,
      stopped: () => this.closed || this.draining,
      closed: () => this.closed,
      offer: (thread) => this.offer(thread),
    });
  }

  /** Starts renewing, sweeping and listening for new inbox entries. */
  start(host: ThreadHost): void {
    this.host = host;
    // Every instance hears of new inbox entries: the holder reads them, and a thread no one holds
    // goes to the first instance with a free slot that takes it.
    this.node.onMessage((message) => {
      if (message.type !== 'poke') return;
      const thread = message.thread;
      if (this.held.has(thread)) void this.offer(thread).catch((error: unknown) => this.log.warn({ err: error, thread }, 'cluster: could not read a thread'));
      else this.waiting.wait(thread);
    });
    const every = (ms: number, work: () => Promise<void>) => {
      const timer = setInterval(() => void work().catch((error: unknown) => this.log.warn({ err: error }, 'cluster: periodic work failed')), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(SPARE_CHECK_MS, () => this.waiting.pull());
    every(Math.max(100, Math.floor(this.node.leaseTtlMs / 3)), () => this.renewAll());
    every(Math.max(200, Math.floor(this.node.leaseTtlMs / 2)), () => this.sweep());
    void this.sweep().catch((error: unknown) => this.log.warn({ err: error }, 'cluster: first sweep failed'));
  }

  /**
   * Keeps an accepted message in its thread's durable inbox: not when it was
   * seen before (a redelivery, or another instance got it too), nor when its
   * sender or its thread is over `limits` (counted for all instances at once).
   */
  async intake(message: InboundMessage, limits?: IntakeLimits): Promise<Intake> {
    const thread = threadKeyOf(message.chat);
    const entry: InboxEntry = { chat: message.chat, message: toQueued(message) };
    const seen = `${CLUSTER_PREFIX}seen:${thread}:${message.messageId}`;
    const keys = [seen, threadKeys(thread).inbox, OPEN, ...senderRateKeys(limits?.userId ?? '')];
    const args = [SEEN_TTL_SECONDS, JSON.stringify(entry), thread, limits?.perMinute ?? 0, RATE_WINDOW_MS, RATE_NOTICE_EVERY_MS, `${thread}:${message.messageId}`, limits?.maxQueued ?? Number.MAX_SAFE_INTEGER];
    const [outcome, wait, tell] = (await this.node.redis.eval(INTAKE, keys.length, ...keys, ...args)) as [number, number?, number?];
    if (outcome === 0) return { kind: 'seen' };
    if (outcome === -2) return { kind: 'full', waiting: Number(wait) };
    if (outcome === -1) return { kind: 'limited', retryAfterMs: Number(wait), notify: tell === 1 };
    await this.node.publish({ type: 'poke', thread });
    return { kind: 'added' };
  }

  /** Takes the thread if no instance holds it, or reads its new inbox entries if this one does. */
  async offer(thread: string): Promise<void> {
    // While shutting down, new entries of a held thread stay in its inbox for whoever takes it next.
    if (this.closed || this.draining) return;
    // A takeover under way hands the runner the whole inbox: reading it meanwhile would hand over the same entries again.
    await this.taking.get(thread)?.catch(() => undefined);
    const held = this.held.get(thread);
    if (held) await this.drain(thread, held);
    else await this.take(thread);
  }

  /** Waits until this instance holds the thread (for work that started here, such as an answered approval). */
  async claim(thread: string): Promise<boolean> {
    while (!this.closed && !this.draining) {
      // A lease being given back is not held any more once that ends: take it again then.
      await this.releasing.get(thread);
      if (this.held.has(thread) || (await this.take(thread, false))) return true;
      await delay(this.retryPauseMs());
    }
    return false;
  }

  /** Called when the thread's runner has nothing left: the lease goes back unless new entries came. */
  idle(thread: string): Promise<void> {
    let releasing = this.releasing.get(thread);
    if (!releasing) {
      releasing = this.release(thread).finally(() => this.releasing.delete(thread));
      this.releasing.set(thread, releasing);
    }
    return releasing;
  }

  private async release(thread: string): Promise<void> {
    const held = this.held.get(thread);
    if (!held || !this.host) return;
    await this.host.flush(thread);
    if (this.host.busy(thread)) return;
    const keys = threadKeys(thread);
    const outcome = (await this.node.redis.eval(RELEASE, 3, keys.lease, keys.inbox, OPEN, held.lease.holder, thread)) as number;
    if (outcome === 0) {
      await this.drain(thread, held, true);
      return;
    }
    if (this.held.get(thread) === held) this.held.delete(thread);
    this.host.forget(thread);
    // The thread's slot is free: a thread waiting for one starts now, not at the next look.
    void this.waiting.pull();
  }

  /** Messages waiting in the shared inboxes (of every instance), and the threads with work not finished. */
  async backlog(): Promise<{ messages: number; threads: number }> {
    const open = await this.node.redis.smembers(OPEN);
    if (!open.length) return { messages: 0, threads: 0 };
    const pipeline = this.node.redis.pipeline();
    for (const thread of open) pipeline.llen(threadKeys(thread).inbox);
    const lengths = (await pipeline.exec()) ?? [];
    return { messages: lengths.reduce((sum, [, length]) => sum + Number(length ?? 0), 0), threads: open.length };
  }

  holderOf(thread: string): string | undefined {
    return this.held.get(thread)?.lease.holder;
  }

  async borrow<T>(thread: string, write: (holder: string) => Promise<T>): Promise<T> {
    const pause = this.retryPauseMs();
    for (let waited = 0; ; waited += pause) {
      const holder = this.holderOf(thread);
      if (holder) return write(holder);
      const lease = await this.node.acquire(leaseNameOf(thread));
      if (lease) {
        try {
          return await write(lease.holder);
        } finally {
          await this.node.resign(lease);
          // Work may have arrived while it was borrowed: whoever is free takes it.
          await this.node.publish({ type: 'poke', thread });
        }
      }
      if (this.closed || waited > 3 * this.node.leaseTtlMs) throw new Error(`thread ${thread} is held by another instance; the change was not written`);
      await delay(pause);
    }
  }

  /** How long to wait before trying again for a lease another instance holds. */
  private retryPauseMs(): number {
    return Math.max(50, Math.floor(this.node.leaseTtlMs / 20));
  }

  /** Whether this instance holds the thread, as far as it knows (see {@link confirm}). */
  holds(thread: string): boolean {
    return this.held.has(thread);
  }

  /**
   * Whether this instance still holds the thread, asked of Redis: the lease is
   * renewed when it does (the work about to start has a whole TTL ahead), and
   * given up here as a lapsed one is when it does not (the turn stops).
   */
  async confirm(thread: string): Promise<boolean> {
    const held = this.held.get(thread);
    if (!held) return false;
    if (await this.node.renew(held.lease)) return true;
    this.lose(thread, held);
    return false;
  }

  /** Shutdown has begun: takes no new thread (the others, or the restart, will). */
  stopTaking(): void {
    this.draining = true;
    this.waiting.clear();
  }

  /**
   * Gives every held thread back, its writes flushed first, and tells the
   * others, so that one with work left (an interrupted turn, waiting messages)
   * is taken at once rather than when its lease would have lapsed.
   */
  async giveBack(): Promise<void> {
    this.stopTaking();
    await Promise.allSettled(
      [...this.held].map(async ([thread, held]) => {
        // A turn still stopping would write after the lease went back: that thread goes back at close.
        if (!this.host || this.host.busy(thread)) return;
        await this.host.flush(thread);
        if (!this.host.busy(thread)) await this.handBack(thread, held);
      }),
    );
  }

  /** Stops taking threads and gives every held one back (their inboxes stay for the others). */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await Promise.allSettled([...this.held].map(([thread, held]) => this.handBack(thread, held)));
    this.held.clear();
  }

  private async handBack(thread: string, held: Held): Promise<void> {
    if (this.held.get(thread) !== held) return;
    this.held.delete(thread);
    this.host?.forget(thread);
    await this.node.resign(held.lease);
    await this.node.publish({ type: 'poke', thread });
  }

  private take(thread: string, takeOver = true): Promise<boolean> {
    let taking = this.taking.get(thread);
    if (!taking) {
      taking = this.acquire(thread, takeOver).finally(() => this.taking.delete(thread));
      this.taking.set(thread, taking);
    }
    return taking;
  }

  private async acquire(thread: string, takeOver: boolean): Promise<boolean> {
    if (this.closed || this.draining || !this.host) return false;
    const lease = await this.node.acquire(leaseNameOf(thread));
    if (!lease) return false;
    const held: Held = { lease, taken: new Set() };
    this.held.set(thread, held);
    this.host.forget(thread);
    if (!takeOver) return true;
    for (const id of await this.host.takeOver(thread)) held.taken.add(id);
    if (!this.host.busy(thread)) await this.idle(thread);
    return true;
  }

  /** Hands the inbox entries not handed yet to the runner. */
  private async drain(thread: string, held: Held, idle = false): Promise<void> {
    const texts = await this.node.redis.lrange(threadKeys(thread).inbox, 0, -1);
    if (this.held.get(thread) !== held || !this.host) return;
    const entries = inboxInOrder(texts);
    let fresh = entries.filter((entry) => !held.taken.has(entry.message.id));
    if (!fresh.length && idle && !this.host.busy(thread)) {
      // The runner is done, yet entries it took are still there (their write failed): read the thread again.
      this.log.warn({ thread, waiting: entries.length }, 'cluster: inbox entries outlived their turn; reading the thread again');
      held.taken.clear();
      this.host.forget(thread);
      for (const id of await this.host.takeOver(thread)) held.taken.add(id);
      fresh = [];
      if (!this.host.busy(thread)) return;
    }
    for (const entry of fresh) held.taken.add(entry.message.id);
    if (fresh.length) this.host.deliver(thread, fresh);
  }

  private async renewAll(): Promise<void> {
    await Promise.all(
      [...this.held].map(async ([thread, held]) => {
        if (!(await this.node.renew(held.lease))) this.lose(thread, held);
      }),
    );
  }

  /** The thread's lease lapsed: its work here stops, and another instance continues it. */
  private lose(thread: string, held: Held): void {
    if (this.held.get(thread) !== held) return;
    this.held.delete(thread);
    this.log.warn({ thread }, 'cluster: a thread lease lapsed; another instance continues the thread');
    this.host?.lost(thread);
  }

  /** Takes the open threads no instance holds (their holder died or gave them back with work left). */
  private async sweep(): Promise<void> {
    if (this.closed || this.draining) return;
    const open = await this.node.redis.smembers(OPEN);
    // A thread poked lately is taken by the first free slot; the sweep takes it only when none freed up in a TTL.
    const recent = Date.now() - this.node.leaseTtlMs;
    const candidates = open.filter((thread) => !this.held.has(thread) && !this.waiting.pokedAfter(thread, recent));
    this.waiting.dropClosed(new Set(open), recent);
    if (!candidates.length) return;
    const pipeline = this.node.redis.pipeline();
    for (const thread of candidates) pipeline.exists(threadKeys(thread).lease);
    const results = (await pipeline.exec()) ?? [];
    await Promise.all(
      candidates.map(async (thread, i) => {
        if (results[i]?.[1] !== 0) {
          this.waiting.drop(thread);
          return;
        }
        // Found here first (its holder died, or its poke is still on the way): the first free slot takes it.
        if (!this.waiting.has(thread)) return this.waiting.wait(thread);
        // Waited a whole TTL with every slot taken: taken now, to run after this instance's turns.
        this.waiting.drop(thread);
        await this.take(thread).catch((error: unknown) => this.log.warn({ err: error, thread }, 'cluster: could not take over a thread'));
      }),
    );
  }
}
