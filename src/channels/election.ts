/**
 * The election port of the channel contract: one holder among the instances
 * for a named duty (Telegram's long poll: a second poller would get 409 from
 * Telegram; each of Discord's shards). Adapters receive an {@link Election} in
 * their `ChannelDeps`; a shared deployment hands them one over Redis
 * (`cluster/redis-election.ts`). On one process, there is no one to compete
 * with: {@link soleElection} grants every campaign at once.
 */

/** A duty held by this instance until `lost` aborts or it resigns. */
export interface Leadership {
  /** Aborts when the lease could not be renewed: stop the duty at once. */
  readonly lost: AbortSignal;
  /** Gives the duty up (on shutdown), so another instance takes it without waiting for the TTL. */
  resign(): Promise<void>;
}

/** Elects one instance per duty. */
export interface Election {
  /**
   * Resolves once this instance holds `duty` (waiting while another holds it);
   * rejects with the signal's reason when `signal` aborts first.
   */
  campaign(duty: string, signal: AbortSignal): Promise<Leadership>;
  /**
   * How many instances are alive, this one included, for sharing out duties
   * that come in numbers (Discord's shards). Absent: this process alone.
   */
  peers?(): Promise<number>;
}

/** The election of a single process: it always wins, and never loses. */
export const soleElection: Election = {
  campaign: (_duty, signal) => {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return Promise.resolve({ lost: new AbortController().signal, resign: () => Promise.resolve() });
  },
  peers: () => Promise.resolve(1),
};
