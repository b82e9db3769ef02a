/**
 * The election among instances on one Redis: a duty is a lease, taken when
 * free, renewed at a third of its TTL, and lost (the holder stops the duty at
 * once) when a renewal finds it gone. A candidate tries again every third of
 * the TTL, so an instance that dies is replaced within about one TTL.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { Election, Leadership } from './election.js';
import type { ClusterNode, HeldLease } from './node.js';

/** An {@link Election} over the cluster's leases. */
export class RedisElection implements Election {
  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

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
    const timer = setInterval(() => {
      this.node.renew(lease).then(
        (held) => {
          if (held) return;
          clearInterval(timer);
          this.log.warn({ duty }, 'cluster: a duty was lost (its lease lapsed)');
          lost.abort(new Error(`the ${duty} lease lapsed`));
        },
        (error: unknown) => this.log.warn({ err: error, duty }, 'cluster: a duty lease was not renewed; trying again'),
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
