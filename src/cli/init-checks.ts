/**
 * What `pincer init` checks before it writes: the model endpoint, the model
 * and one tool call, then each channel's token. The checks are doctor's own
 * (`checks.ts`); this file feeds them the answers, and fetches the model list
 * a local server offers to pick from.
 */
import { z } from 'zod';
import { DiscordConfigSchema, LlmConfigSchema, SlackConfigSchema, TelegramConfigSchema } from '../config/schema.js';
import type { LlmSettings } from '../llm/openai-provider.js';
import { createRedactor, type Redactor } from '../safety/secrets.js';
import {
  checkDiscord,
  checkModelEndpoint,
  checkModelExists,
  checkSlack,
  checkTelegram,
  checkToolCalls,
  DEFAULT_CHECK_OPTIONS,
  type CheckResult,
} from './checks.js';
import { STATUS_MARKS } from './doctor.js';
import { API_ADDRESSES, type ChannelAnswers, type ChannelName, type InitAnswers } from './init-answers.js';

/** The part of the answers that reaches the model. */
export type ModelAnswers = Pick<InitAnswers, 'baseUrl' | 'apiKey' | 'model'>;

/** The model settings as the bot builds them from the answers. */
function llmSettings(answers: ModelAnswers): LlmSettings {
  return LlmConfigSchema.parse({ baseUrl: answers.baseUrl, apiKey: answers.apiKey, model: answers.model });
}

/** The endpoint, the model, then one tool call (a little money): each is pointless once one before failed. */
export async function checkModelAnswers(answers: ModelAnswers): Promise<CheckResult[]> {
  const llm = llmSettings(answers);
  const results: CheckResult[] = [];
  for (const check of [checkModelEndpoint, checkModelExists, checkToolCalls]) {
    const result = await check(llm);
    results.push(result);
    if (result.status === 'fail') break;
  }
  return results;
}

/**
 * A channel's token, checked as doctor checks it, at the API address the
 * answers give (a self-hosted Bot API, a proxy), which init writes to `.env`
 * so that doctor and the bot use it too.
 */
export async function checkChannelAnswers(channel: ChannelName, answers: ChannelAnswers): Promise<CheckResult[]> {
  try {
    if (channel === 'telegram') return await checkTelegram(TelegramConfigSchema.parse({ token: answers.telegramToken, apiRoot: answers.telegramApiRoot }));
    if (channel === 'discord') return await checkDiscord(DiscordConfigSchema.parse({ token: answers.discordToken, apiUrl: answers.discordApiUrl }));
    return await checkSlack(SlackConfigSchema.parse({ botToken: answers.slackBotToken, appToken: answers.slackAppToken, apiUrl: answers.slackApiUrl }));
  } catch (error) {
    const issue = error instanceof z.ZodError ? error.issues[0] : undefined;
    const { flag, variable } = API_ADDRESSES[channel];
    return [{ name: `${channel} token`, status: 'fail', detail: `${variable}: ${issue?.message ?? String(error)}`, fix: `correct --${flag} or ${variable}, or unset it` }];
  }
}

/** Whether any result failed. */
export const anyFailed = (results: readonly CheckResult[]): boolean => results.some((result) => result.status === 'fail');

/** A result as doctor prints it: the mark (unless `mark: false`), the name and the detail, and the fix on a line of its own. */
export function describeResult({ name, status, detail, fix }: CheckResult, options: { mark?: boolean } = {}): string {
  const shown = status === 'skip' ? `skipped${detail ? ` (${detail})` : ''}` : detail;
  const line = `${options.mark === false ? '' : `${STATUS_MARKS[status]} `}${name}${shown ? `: ${shown}` : ''}`;
  return fix && (status === 'fail' || status === 'warn') ? `${line}\n    fix: ${fix}` : line;
}

/** A redactor for every secret among the answers (results may quote a URL with a token in it). */
export function answersRedactor(answers: Partial<InitAnswers>): Redactor {
  const secrets = [answers.apiKey, answers.telegramToken, answers.discordToken, answers.slackBotToken, answers.slackAppToken];
  return createRedactor(secrets.filter((secret): secret is string => Boolean(secret)));
}

/** How long the model list may take: it only offers names, so it must not hold the questions up. */
const MODEL_LIST_TIMEOUT_MS = 5_000;

const ModelListSchema = z.object({ data: z.array(z.object({ id: z.string() })) });

/** The model ids `GET <base>/models` lists, or none when the endpoint does not answer with a list. */
export async function listedModels(baseUrl: string, apiKey?: string): Promise<string[]> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, {
      headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(Math.min(MODEL_LIST_TIMEOUT_MS, DEFAULT_CHECK_OPTIONS.requestTimeoutMs)),
    });
    if (!response.ok) return [];
    const parsed = ModelListSchema.safeParse(await response.json());
    return parsed.success ? parsed.data.data.map((model) => model.id) : [];
  } catch {
    return [];
  }
}
