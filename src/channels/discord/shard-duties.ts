/**
 * Discord's gateway shards as duties of the instances of a cluster: shard `i`
 * of `N` is the duty `discord-shard-<i>-of-<N>`. An instance campaigns while it
 * holds fewer shards than its fair share (fair-share.ts), runs one gateway
 * client per shard it holds, and gives one back when it holds more (another
 * instance joined). A shard whose duty is lost has its client destroyed at
 * once; a dead instance's shards lapse after the lease TTL, and the others,
 * whose share grew when it dropped out, take them up. An instance that holds
 * no shard stands by, ready, and still sends over REST.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from 'discord.js';
import type { Election, Leadership } from '../election.js';
import type { Logger } from '../../log.js';
import type { ChannelHealth } from '../types.js';
import { connectClient } from './connect.js';
import { fairShare, shouldGiveBack } from './fair-share.js';
import { heldShardsHealth } from './health.js';

/** The duty's name in the election for shard `id` of `count`. */
export function shardDuty(id: number, count: number): string {
  return `discord-shard-${id}-of-${count}`;
}

/** Pause before campaigning again after a failed campaign or a shard that could not connect. */
const RETRY_AFTER_MS = 5_000;
/** How often a campaign waiting for room in the share looks again (local state only). */
const ROOM_CHECK_MS = 100;
/** How long stopping waits for the shards' clients to close. */
const STOP_GRACE_MS = 5_000;

/** What {@link ShardDuties} needs. */
export interface ShardDutiesDeps {
  election: Election;
  log: Logger;
  shardCount: number;
  token: string;
  /** How often the live instances are counted and the shares evened out. */
  balanceEveryMs: number;
  /** How long a shard's client may take to be ready. */
  readyTimeoutMs: number;
  /** A new client for shard `id`, its events wired, not logged in. */
  createClient(id: number): Client;
}

/** A shard this instance holds. */
interface HeldShard {
  client: Client;
  /** Aborted to give the shard back to even out the shares. */
  giveBack: AbortController;
}

/** Campaigns for this instance's share of the shards and runs their gateway clients. */
export class ShardDuties {
  private readonly stopping = new AbortController();
  private readonly held = new Map<number, HeldShard>();
  /** Aborted when the share is full: the campaigns under way are called off. */
  private full = new AbortController();
  private fair: number;
  private overAtLastLook = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly deps: ShardDutiesDeps) {
    this.fair = deps.shardCount;
  }

  /** Counts the live instances, then campaigns in the background. */
  async start(): Promise<void> {
    this.fair = fairShare(this.deps.shardCount, (await this.peers()) ?? 1);
    this.deps.log.info({ shardCount: this.deps.shardCount, fairShare: this.fair }, 'discord: sharing the gateway shards with the other instances');
    const shards = Array.from({ length: this.deps.shardCount }, (_, id) => this.runShard(id));
    this.loops = [...shards, this.balance()];
  }

  /** Closes the shards' gateway connections, then gives their duties back. */
  async stop(): Promise<void> {
    this.stopping.abort();
    // A gateway client that does not finish closing (one destroyed in the middle of its login) must not hold the shutdown up.
    const stopped = await Promise.race([Promise.all(this.loops).then(() => true), sleep(STOP_GRACE_MS, false, { ref: false })]);
    if (!stopped) this.deps.log.warn({ shards: this.shards() }, 'discord: a gateway shard did not close in time; stopping without it');
  }

  /** The shards this instance runs, in order. */
  shards(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** Ready when every shard held is ready (holding none is standing by). */
  health(): ChannelHealth {
    return heldShardsHealth(new Map([...this.held].map(([id, shard]) => [id, shard.client])));
  }

  /** The life of one shard's duty: wait for room in the share, campaign, run it, and again. */
  private async runShard(id: number): Promise<void> {
    while (await this.roomInShare()) {
      const leadership = await this.campaign(id);
      if (!leadership) continue;
      // Another of this instance's campaigns filled the share first.
      if (this.held.size >= this.fair) {
        await this.resign(id, leadership);
        continue;
      }
      let failed = false;
      try {
        await this.serve(id, leadership);
      } catch (error) {
        this.deps.log.error({ err: error, shard: id }, 'discord: a gateway shard could not connect; giving it back and trying again');
        failed = true;
      }
      // A duty already lost is not ours to give back.
      if (!leadership.lost.aborted) await this.resign(id, leadership);
      if (failed) await this.pause();
    }
  }

  /** Waits while the share is full; false once stopping. */
  private async roomInShare(): Promise<boolean> {
    while (this.held.size >= this.fair) {
      const waited = await sleep(ROOM_CHECK_MS, true, { signal: this.stopping.signal }).catch(() => false);
      if (!waited) return false;
    }
    if (this.full.signal.aborted) this.full = new AbortController();
    return !this.stopping.signal.aborted;
  }

  /** The duty once won; undefined when called off (stopping, share full) or failed. */
  private async campaign(id: number): Promise<Leadership | undefined> {
    const signal = AbortSignal.any([this.stopping.signal, this.full.signal]);
    try {
      return await this.deps.election.campaign(shardDuty(id, this.deps.shardCount), signal);
    } catch (error) {
      if (signal.aborted) return undefined;
      this.deps.log.warn({ err: error, shard: id }, 'discord: the election for a gateway shard failed; trying again');
      await this.pause();
      return undefined;
    }
  }

  /** Runs the shard's client until the duty is lost, given back or the channel stops. */
  private async serve(id: number, leadership: Leadership): Promise<void> {
    const giveBack = new AbortController();
    const over = AbortSignal.any([leadership.lost, this.stopping.signal, giveBack.signal]);
    const client = this.deps.createClient(id);
    this.held.set(id, { client, giveBack });
    if (this.held.size >= this.fair) this.full.abort();
    let connecting: Promise<void> | undefined;
    try {
      if (over.aborted) return;
      this.deps.log.info({ shard: id, shardCount: this.deps.shardCount }, 'discord: connecting a gateway shard this instance holds');
      const ended = once(over, 'abort');
      connecting = connectClient(client, this.deps.token, this.deps.readyTimeoutMs);
      await Promise.race([connecting, ended]);
      if (!over.aborted) this.deps.log.info({ shard: id }, 'discord: gateway shard ready');
      await ended;
      if (leadership.lost.aborted && !this.stopping.signal.aborted) {
        this.deps.log.warn({ shard: id }, 'discord: the duty of a gateway shard was lost; its connection is closed');
      }
    } finally {
      this.held.delete(id);
      await client.destroy();
      // A login still under way is closed again once it settles.
      void connecting?.then(() => client.destroy(), () => undefined);
    }
  }

  /** Every balance interval: recounts the instances and gives one shard back when over the share. */
  private async balance(): Promise<void> {
    while (await sleep(this.deps.balanceEveryMs, true, { signal: this.stopping.signal }).catch(() => false)) {
      const peers = await this.peers();
      if (peers !== undefined) this.fair = fairShare(this.deps.shardCount, peers);
      const held = this.held.size;
      const giveBack = shouldGiveBack(held, this.fair, this.overAtLastLook);
      this.overAtLastLook = held > this.fair && !giveBack;
      if (giveBack) this.giveBackOne();
    }
  }

  private giveBackOne(): void {
    const id = Math.max(...this.held.keys());
    this.deps.log.info({ shard: id, fairShare: this.fair }, 'discord: giving a gateway shard back to even out the instances');
    this.held.get(id)?.giveBack.abort();
  }

  /** The live instances, or undefined when they could not be counted. */
  private async peers(): Promise<number | undefined> {
    try {
      return this.deps.election.peers ? await this.deps.election.peers() : 1;
    } catch (error) {
      this.deps.log.warn({ err: error }, 'discord: could not count the live instances; keeping the current share');
      return undefined;
    }
  }

  private async resign(id: number, leadership: Leadership): Promise<void> {
    try {
      await leadership.resign();
    } catch (error) {
      this.deps.log.warn({ err: error, shard: id }, 'discord: could not give a gateway shard back; it lapses on its own');
    }
  }

  private async pause(): Promise<void> {
    await sleep(RETRY_AFTER_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}
