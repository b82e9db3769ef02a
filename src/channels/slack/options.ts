/**
 * What the Slack adapter takes besides its config section: the Web API retry
 * policies, whose defaults suit production (tests shorten them), where the
 * HTTP mode listens, and the owners from the composition root.
 */
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './web-api.js';

/** Retries, listening address and owners of the Slack channel; every field is optional. */
export interface SlackChannelOptions {
  /** Config `owners` (`slack:U01`, ...): the allowlists always admit the Slack ones. */
  owners?: readonly string[];
  /**
   * Retry policy of the calls that deliver messages. The default retries for
   * about 30 minutes; tests set it low (`{ retries: 2, factor: 1, minTimeout: 10, maxTimeout: 50 }`)
   * so that a broken fake cannot hang them. 429s always wait for `Retry-After`.
   */
  clientRetries?: RetryPolicy;
  /**
   * Retry policy of look-ups (names, roles). They fall back to ids, so they give
   * up quickly rather than hold up a message; `clientRetries`, when set, applies
   * to them too.
   */
  lookupRetries?: RetryPolicy;
  /** Interface the HTTP-mode server binds; all interfaces when empty. */
  httpHost?: string;
}

/** The defaults of {@link SlackChannelOptions}. */
export const DefaultSlackChannelOptions = {
  owners: [],
  clientRetries: DEFAULT_RETRY_POLICY,
  lookupRetries: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 5_000 },
  httpHost: '',
} as const satisfies Required<SlackChannelOptions>;

/** Options with every default filled in. */
export type ResolvedSlackOptions = Required<SlackChannelOptions>;

/** Merges `options` over the defaults. */
export function resolveSlackOptions(options: SlackChannelOptions = {}): ResolvedSlackOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const lookupRetries = options.lookupRetries ?? options.clientRetries ?? DefaultSlackChannelOptions.lookupRetries;
  return { ...DefaultSlackChannelOptions, ...defined, lookupRetries };
}
