/**
 * A fake model whose every call costs $0.60, with the configuration that makes
 * it so, for the tests of the daily cost limit.
 */
import type { ConfigInput } from '../../src/config/schema.js';
import { textReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { userTextsSinceAnswer } from './app-rig.js';

/**
 * Every call answers 1,000 output tokens at $600 per million: $0.60. With the
 * output limit at 1,000 tokens and prompts free, each call's estimate is its
 * cost, so a $1.00 limit lets two calls through one by one.
 */
export const SIXTY_CENT_CALLS = {
  llm: { maxTokens: 1_000, prices: { 'fake-model': { input: 0, output: 600 } } },
  agent: { dailyCostLimitUsd: 1 },
} satisfies ConfigInput;

/** The usage of a $0.60 call under {@link SIXTY_CENT_CALLS}. */
export const SIXTY_CENTS = { usage: { prompt_tokens: 50, completion_tokens: 1_000 } };

/** An echo of the user's latest messages that costs $0.60. */
export function sixtyCentEcho(request: FakeLlmRequest): FakeLlmEntry {
  return textReply(`echo: ${userTextsSinceAnswer(request).join(' + ')}`, SIXTY_CENTS);
}

/** The usage-limit message under a $1.00 limit, as a person sees it. */
export const LIMIT_MESSAGE = /^You have reached today's usage limit \(\$1\.00; spent \$\d+\.\d\d\)\. It resets at midnight UTC\.$/;
