/**
 * Builds the grammY Bot the adapter talks through: API root from config, a
 * request timeout that outlasts a long poll, and the transformer stack for
 * rate limits and transient failures.
 */
import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, type HttpError } from 'grammy';
import type { SharedBudget } from '../types.js';
import type { ResolvedTelegramOptions } from './options.js';
import { beforeRequest } from './before-request.js';
import { DefaultPacingLimits, MessagePacer, messagePacing } from './pacing.js';
import { bindToLifetime, networkRetry } from './retry.js';

/** Seconds a request may take beyond the long-poll timeout before it counts as a network error. */
const REQUEST_TIMEOUT_MARGIN_SECONDS = 30;

/** What {@link createBot} needs. */
export interface BotSettings {
  token: string;
  /** Bot API root without a trailing slash; the public API when absent. */
  apiRoot?: string;
  options: ResolvedTelegramOptions;
  /** Aborted when the channel stops. */
  lifetime: AbortSignal;
  /** Told of each network failure of an API call. */
  onNetworkFailure?: (error: HttpError) => void;
  /** Where several instances send as one bot: the overall message limit, counted for all of them. */
  sharedBudget?: SharedBudget;
  /** Methods whose network failures the caller retries itself (networkRetry's `passedOn`). */
  retriedByCaller?: ReadonlySet<string>;
}

/**
 * A grammY Bot whose API calls are, from the outside in: bound to the channel's
 * lifetime, retried on network errors, retried on 429 (honouring retry_after)
 * and 5xx, (messages only) paced per chat, and last the call's own step
 * before its request (before-request.ts: a post is put on record there).
 */
export function createBot(settings: BotSettings): Bot {
  const { options } = settings;
  const bot = new Bot(settings.token, {
    client: {
      ...(settings.apiRoot ? { apiRoot: settings.apiRoot } : {}),
      timeoutSeconds: options.pollingTimeoutSeconds + REQUEST_TIMEOUT_MARGIN_SECONDS,
    },
  });
  // Installed innermost first: each transformer wraps the ones installed before it.
  bot.api.config.use(beforeRequest());
  if (options.throttle) bot.api.config.use(messagePacing(new MessagePacer(DefaultPacingLimits, undefined, settings.sharedBudget)));
  bot.api.config.use(
    autoRetry({
      maxRetryAttempts: options.maxRetryAttempts,
      maxDelaySeconds: options.maxRetryDelaySeconds,
      rethrowHttpErrors: true,
    }),
  );
  bot.api.config.use(
    networkRetry({
      attempts: options.networkRetryAttempts,
      delayMs: options.networkRetryDelayMs,
      lifetime: settings.lifetime,
      ...(settings.onNetworkFailure ? { onFailure: settings.onNetworkFailure } : {}),
      ...(settings.retriedByCaller ? { passedOn: settings.retriedByCaller } : {}),
    }),
  );
  bot.api.config.use(bindToLifetime(settings.lifetime));
  return bot;
}
