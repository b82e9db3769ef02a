/**
 * The election among instances on one Redis: a duty is a lease, taken when
 * free, renewed at a third of its TTL, and lost (the holder stops the duty at
 * once) when a renewal finds it gone, or when no renewal has gone through for
 * a whole TTL (Redis unreachable: the lease has lapsed, and another instance
 * may hold it by now). A candidate tries again every third of the TTL, so an
 * instance that dies is replaced within about one TTL.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { Election, Leadership } from '../channels/election.js';
import type { ClusterMembers } from './members.js';
import type { ClusterNode, HeldLease } from './node.js';

/** An {@link Election} over the cluster's leases; `members` counts the live instances for {@link peers}. */
export class RedisElection implements Election {
  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
    private readonly members?: ClusterMembers,
  ) {}

  /** The live instances, this one included; 1 without a list of members. */
  peers(): Promise<number> {
    return this.members ? this.members.count() : Promise.resolve(1);
  }

  async campaign(duty: string, signal: AbortSignal): Promise<Leadership> {
    const name = `duty:${duty}`;
    for (;;) {
      signal.throwIfAborted();
      let lease: HeldLease | undefined;
      try {
        lease = await this.node.acquire(name);
      } catch (error) {
        this.log.warn({ err: error, duty }, 'cluster: could not campaign for a duty; trying again');
      }
      if (lease) return this.hold(lease, duty);
      await delay(this.retryMs(), undefined, { signal });
    }
  }

  /** A third of the lease's TTL: how often a holder renews and a candidate tries again. */
  private retryMs(): number {
    return Math.max(100, Math.floor(this.node.leaseTtlMs / 3));
  }

  private hold(lease: HeldLease, duty: string): Leadership {
    const lost = new AbortController();
    this.log.info({ duty, instance: this.node.instanceId }, 'cluster: this instance holds a duty');
    let renewedAt = Date.now();
    const lose = (why: string) => {
      clearInterval(timer);
      this.log.warn({ duty }, `cluster: a duty was lost (${why})`);
      lost.abort(new Error(`the ${duty} lease lapsed`));
    };
    const timer = setInterval(() => {
      const sentAt = Date.now();
      this.node.renew(lease).then(
        (held) => {
          if (lost.signal.aborted) return;
          if (held) renewedAt = sentAt;
          else lose('its lease lapsed');
        },
        (error: unknown) => {
          if (lost.signal.aborted) return;
          if (Date.now() - renewedAt >= this.node.leaseTtlMs) lose('its lease could not be renewed for a whole TTL');
          else this.log.warn({ err: error, duty }, 'cluster: a duty lease was not renewed; trying again');
        },
      );
    }, this.retryMs());
    timer.unref();
    return {
      lost: lost.signal,
      resign: async () => {
        clearInterval(timer);
        if (!lost.signal.aborted) lost.abort(new Error(`the ${duty} duty was given up`));
        await this.node.resign(lease).catch((error: unknown) => this.log.warn({ err: error, duty }, 'cluster: a duty was not given up; it lapses'));
      },
    };
  }
}
