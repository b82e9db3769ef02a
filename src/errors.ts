/**
 * The few error classes pincer throws. Each carries what its catcher needs;
 * nothing in pincer throws a bare string.
 */

/** A configuration value is missing or wrong. Thrown at start, before anything connects. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /**
   * @param issues one line per problem: the key, the value found and what is expected
   */
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n${issues.map((line) => `  - ${line}`).join('\n')}`);
  }
}

/** Kinds of LLM failure the agent reacts to differently. */
export type LlmErrorKind =
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'connection'
  | 'auth'
  | 'context_length'
  | 'bad_request'
  | 'aborted'
  | 'other';

/** A request to the model failed; `retryable` says whether trying again may help. */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(
    message: string,
    readonly kind: LlmErrorKind,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A tool could not do its job. `modelMessage` is what the model reads as the tool
 * result; it never contains secrets or stack traces.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(readonly modelMessage: string, options?: { cause?: unknown }) {
    super(modelMessage, options);
  }
}

/** A platform call failed (after the adapter's own retries). */
export class ChannelError extends Error {
  override readonly name = 'ChannelError';
  constructor(
    readonly channel: string,
    message: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(`${channel}: ${message}`, options);
  }
}

/** Why an attachment could not be fetched. */
export type AttachmentFetchFailure = 'too-big' | 'timeout' | 'failed';

/**
 * A channel could not download an attachment. The message is safe to log and
 * show: it never holds the URL used (Telegram's carries the bot token).
 */
export class AttachmentFetchError extends Error {
  override readonly name = 'AttachmentFetchError';
  constructor(
    readonly reason: AttachmentFetchFailure,
    message: string,
    /** For `too-big`: the limit the file passed, in bytes. */
    readonly limitBytes?: number,
  ) {
    super(message);
  }
}

/** The store could not be opened (unreachable, refused, or too slow to answer). `url` has no password. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly url: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A person's daily cost limit leaves no room for a model call: what they spent
 * today plus the calls of theirs still running reach `agent.dailyCostLimitUsd`.
 * The call was not made.
 */
export class UsageLimitError extends Error {
  override readonly name = 'UsageLimitError';
  /**
   * @param userId the qualified id of the person the call would count toward
   * @param limitUsd the daily limit it would pass
   */
  constructor(
    readonly userId: string,
    readonly limitUsd: number,
  ) {
    super(`${userId} reached today's usage limit ($${limitUsd.toFixed(2)})`);
  }
}
