/**
 * What the Telegram adapter takes besides its config section: tuning knobs
 * whose defaults suit production (tests shorten the waits), and the owners
 * from the composition root.
 */

/** Timings, limits and owners of {@link TelegramChannel}; every field is optional. */
export interface TelegramChannelOptions {
  /** How long one getUpdates long poll is held open by Telegram. */
  pollingTimeoutSeconds?: number;
  /** First pause after a failed getUpdates; doubles up to 30 s. */
  pollingRetryDelayMs?: number;
  /**
   * How much longer than the long-poll timeout a poll may take to complete
   * before the channel counts as not receiving and the watchdog reconnects.
   */
  stallGraceMs?: number;
  /** A button press the agent has not answered by then is acknowledged empty. */
  callbackAnswerDelayMs?: number;
  /** How long a getChatMember answer is trusted. */
  adminCacheMs?: number;
  /** Attempts after a 429 or 5xx (@grammyjs/auto-retry). */
  maxRetryAttempts?: number;
  /** Longest retry_after honoured; a longer one fails the call. */
  maxRetryDelaySeconds?: number;
  /** Attempts after a network error (connection refused, reset, timeout). */
  networkRetryAttempts?: number;
  /** First pause after a network error; doubles each attempt. */
  networkRetryDelayMs?: number;
  /** Pace outgoing messages within Telegram's limits (pacing.ts). Off in tests: it spaces messages by a second. */
  throttle?: boolean;
  /** Minimum time between two denied-access replies to one user. */
  deniedReplyIntervalMs?: number;
  /** Config `owners` (`telegram:42`, ...): the allowlists always admit the Telegram ones. */
  owners?: readonly string[];
}

/** The defaults of {@link TelegramChannelOptions}. */
export const DefaultTelegramChannelOptions = {
  pollingTimeoutSeconds: 30,
  pollingRetryDelayMs: 1000,
  stallGraceMs: 15_000,
  callbackAnswerDelayMs: 2000,
  adminCacheMs: 60_000,
  maxRetryAttempts: 5,
  maxRetryDelaySeconds: 60,
  networkRetryAttempts: 4,
  networkRetryDelayMs: 1000,
  throttle: true,
  deniedReplyIntervalMs: 3_600_000,
  owners: [],
} as const satisfies Required<TelegramChannelOptions>;

/** Options with every default filled in. */
export type ResolvedTelegramOptions = Required<TelegramChannelOptions>;

/** Merges `options` over the defaults. */
export function resolveOptions(options: TelegramChannelOptions = {}): ResolvedTelegramOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...DefaultTelegramChannelOptions, ...defined };
}
