/**
 * What the Discord adapter takes besides its config section: timings whose
 * defaults suit production, and the owners from the composition root.
 */

/** Timings and owners of the Discord channel; every field is optional. */
export interface DiscordChannelOptions {
  /** Interactions must be acknowledged within 3 s; defer when the agent has not answered by then. */
  deferAfterMs?: number;
  /** A deferred reply left unanswered is removed before its 15-minute token expires. */
  deferredReplyLifetimeMs?: number;
  /** How long `start` waits for the gateway to be ready. */
  readyTimeoutMs?: number;
  /** Config `owners` (`discord:123`, ...): the allowlists always admit the Discord ones. */
  owners?: readonly string[];
  /** In a cluster: how often the live instances are counted and the gateway shards evened out. */
  balanceEveryMs?: number;
}

/** The defaults of {@link DiscordChannelOptions}. */
export const DefaultDiscordChannelOptions = {
  deferAfterMs: 2_000,
  deferredReplyLifetimeMs: 14 * 60_000,
  readyTimeoutMs: 60_000,
  owners: [],
  balanceEveryMs: 2_000,
} as const satisfies Required<DiscordChannelOptions>;

/** Options with every default filled in. */
export type ResolvedDiscordOptions = Required<DiscordChannelOptions>;

/** Merges `options` over the defaults. */
export function resolveDiscordOptions(options: DiscordChannelOptions = {}): ResolvedDiscordOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...DefaultDiscordChannelOptions, ...defined };
}
