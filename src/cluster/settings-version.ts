/**
 * The settings' version (tools/settings-version.ts) on the cluster's Redis: a
 * counter that a change moves on with INCR once it is stored, read with one GET
 * per decision. The instances are also told at once over pub/sub, so that they
 * drop their copies before anyone asks; a message that does not arrive costs
 * nothing but that head start.
 */
import type { Logger } from '../log.js';
import type { SettingsVersion } from '../tools/settings-version.js';
import { CLUSTER_PREFIX, type ClusterNode } from './node.js';

/** The counter. */
const VERSION_KEY = `${CLUSTER_PREFIX}settings-version`;

/** {@link SettingsVersion} on the cluster's Redis. */
export class RedisSettingsVersion implements SettingsVersion {
  /** The read the callers of this moment share, until it is sent. */
  private next: Promise<number> | undefined;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

  /**
   * One GET for every caller of the same moment (the calls of one tool batch,
   * the policy and the permissions of one decision): it is sent once they have
   * all asked, so none of them reads a version older than its own call.
   */
  read(): Promise<number> {
    this.next ??= Promise.resolve().then(() => {
      this.next = undefined;
      return this.node.redis.get(VERSION_KEY).then((value) => Number(value ?? 0));
    });
    return this.next;
  }

  async bump(): Promise<void> {
    await this.node.redis.incr(VERSION_KEY);
    await this.node.publish({ type: 'settings' }).catch((error: unknown) => this.log.warn({ err: error }, 'cluster: a settings change was not announced; the others see it at their next read'));
  }
}
