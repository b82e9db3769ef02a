/**
 * The model provider for any OpenAI-compatible Chat Completions endpoint
 * (OpenAI, OpenRouter, vLLM, llama.cpp server, Ollama) through the openai SDK.
 * Retries are ours, not the SDK's, so that they honour pincer's config, log
 * through pino and stop the moment a turn is stopped.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { withCallIdsUniqueIn } from './call-ids.js';
import { startDeadline } from './deadline.js';
import { toLlmError } from './errors.js';
import { PriceTable } from './pricing.js';
import { withRetries, type RetryNotice } from './retry.js';
import { loadSdk } from './sdk.js';
import { SentMessages } from './sent-messages.js';
import { StreamAssembler } from './stream.js';
import type { LlmProvider, LlmRequest, LlmResponse, ToolDefinition } from './types.js';
import { parseCompletion, toWireTool, type ParsedCompletion } from './wire.js';

/** The `llm` section of the config, with defaults filled in. */
export type LlmSettings = Config['llm'];

/** Collaborators of {@link OpenAiProvider}, all optional. */
export interface OpenAiProviderOptions {
  logger?: Logger;
  /** Source of backoff jitter in [0, 1); tests pin it. */
  random?: () => number;
  /**
   * Removes secrets from every text of the conversation before it is sent (the
   * app's redactor). The same text must give the same result: a message is
   * redacted once and its redacted form re-sent with the later requests.
   */
  redact?: (text: string) => string;
}

/**
 * Local servers accept any key but the SDK insists on one; this stands in
 * when none is configured.
 */
export const PLACEHOLDER_API_KEY = 'not-needed';

/** Model families that reject `max_tokens` and want `max_completion_tokens`. */
const COMPLETION_TOKENS_MODELS = /^(o\d|gpt-5)/;

/**
 * Answers chat-completion requests from the configured endpoint.
 *
 * @example
 * const llm = new OpenAiProvider(config.llm, { logger });
 * const reply = await llm.complete({ messages: [{ role: 'user', content: 'hi' }], signal });
 */
export class OpenAiProvider implements LlmProvider {
  readonly model: string;
  /** The SDK's client, made with the SDK's first load (see sdk.ts). */
  private client: Promise<OpenAI> | undefined;
  /** The client once made: its base URL names the endpoint in errors. */
  private madeClient: OpenAI | undefined;
  private readonly prices: PriceTable;
  private readonly log: Logger;
  /** The conversation's messages as sent, redacted, kept per message across requests. */
  private readonly sent: SentMessages;
  /** The output limit's field: `max_completion_tokens` for the models that want it. */
  private readonly maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Set once the endpoint answered a streaming request with no stream. */
  private streamingUnsupported = false;

  /** @throws ConfigError when no model is configured */
  constructor(
    private readonly settings: LlmSettings,
    private readonly options: OpenAiProviderOptions = {},
  ) {
    if (!settings.model) throw new ConfigError(['llm.model: not set; set PINCER_MODEL or llm.model to the model name']);
    this.model = settings.model;
    this.log = options.logger ?? silentLogger;
    this.prices = new PriceTable(settings.prices);
    this.sent = new SentMessages(options.redact);
    const bareModel = this.model.slice(this.model.lastIndexOf('/') + 1);
    this.maxTokensField = COMPLETION_TOKENS_MODELS.test(bareModel) ? 'max_completion_tokens' : 'max_tokens';
  }

  private clientOf(): Promise<OpenAI> {
    return (this.client ??= loadSdk().then(({ default: OpenAI }) => {
      this.madeClient = new OpenAI({
        baseURL: this.settings.baseUrl,
        apiKey: this.settings.apiKey || PLACEHOLDER_API_KEY,
        maxRetries: 0,
        timeout: this.settings.timeoutMs,
      });
      return this.madeClient;
    }));
  }

  /**
   * Sends one request, retrying transient failures. Streams when the request has
   * `onTextDelta` and `llm.stream` is on; without streaming the listener gets the
   * whole text once.
   *
   * @throws LlmError with `kind` saying what went wrong
   */
  async complete(request: LlmRequest): Promise<LlmResponse> {
    const streaming = Boolean(request.onTextDelta) && this.settings.stream && !this.streamingUnsupported;
    let forwarded = false;
    const parsed = await withRetries(
      () => (streaming ? this.streamOnce(request, () => (forwarded = true)) : this.completeOnce(request)),
      {
        maxRetries: this.settings.maxRetries,
        baseDelayMs: this.settings.retryBaseDelayMs,
        maxDelayMs: this.settings.retryMaxDelayMs,
        signal: request.signal,
        random: this.options.random,
        // Text already shown to the user would be shown twice by a retry.
        canRetry: () => !forwarded,
        onRetry: (notice) => this.logRetry(notice),
      },
    );
    if (!streaming && parsed.content) request.onTextDelta?.(parsed.content);
    return this.toResponse(parsed, request);
  }

  private async completeOnce(request: LlmRequest): Promise<ParsedCompletion> {
    return this.attempt(request, async (signal) => {
      const client = await this.clientOf();
      const completion = await client.chat.completions.create({ ...this.body(request), stream: false }, { signal });
      return parseCompletion(completion);
    });
  }

  private async streamOnce(request: LlmRequest, onForward: () => void): Promise<ParsedCompletion> {
    return this.attempt(request, async (signal) => {
      const assembler = new StreamAssembler((delta) => {
        onForward();
        request.onTextDelta?.(delta);
      });
      const body = { ...this.body(request), stream: true as const, stream_options: { include_usage: true } };
      const stream = await (await this.clientOf()).chat.completions.create(body, { signal });
      for await (const chunk of stream) assembler.add(chunk);
      // The SDK ends an aborted stream quietly; without this an interrupted
      // answer would pass for a complete one.
      if (signal.aborted) throw new Error('stream interrupted');
      if (assembler.empty) return this.withoutStreaming(request);
      return assembler.result();
    });
  }

  /**
   * Some OpenAI-compatible servers ignore `stream: true` and answer with one
   * JSON body, which the SDK reads as an empty stream. Ask again without
   * streaming, and stop asking this endpoint to stream.
   */
  private async withoutStreaming(request: LlmRequest): Promise<ParsedCompletion> {
    if (!this.streamingUnsupported) this.log.warn({ baseUrl: this.settings.baseUrl }, 'the model endpoint does not stream; continuing without streaming');
    this.streamingUnsupported = true;
    const parsed = await this.completeOnce(request);
    if (parsed.content) request.onTextDelta?.(parsed.content);
    return parsed;
  }

  /** Runs one attempt under its own deadline and types whatever it throws. */
  private async attempt<T>(request: LlmRequest, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = startDeadline(this.settings.timeoutMs, request.signal);
    try {
      return await run(deadline.signal);
    } catch (error) {
      const endpoint = this.madeClient && endpointOf(this.madeClient.baseURL);
      throw toLlmError(error, { aborted: deadline.aborted, timedOut: deadline.timedOut, timeoutMs: this.settings.timeoutMs, endpoint });
    } finally {
      deadline.dispose();
    }
  }

  private body(request: LlmRequest): ChatCompletionCreateParamsBase {
    const maxTokens = request.maxTokens ?? this.settings.maxTokens;
    const temperature = request.temperature ?? this.settings.temperature;
    return {
      model: this.model,
      messages: this.sent.of(request.messages),
      ...(request.tools?.length ? { tools: wireTools(request.tools) } : {}),
      ...(this.maxTokensField === 'max_completion_tokens' ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens }),
      ...(temperature === undefined ? {} : { temperature }),
    };
  }

  private toResponse(parsed: ParsedCompletion, request: LlmRequest): LlmResponse {
    const model = parsed.model ?? this.model;
    return {
      content: parsed.content,
      toolCalls: withCallIdsUniqueIn(parsed.toolCalls, request.messages),
      finishReason: parsed.finishReason,
      usage: parsed.usage,
      costUsd: this.prices.costOf([this.model, model], parsed.usage),
      model,
    };
  }

  private logRetry({ retry, maxRetries, delayMs, error }: RetryNotice): void {
    this.log.warn(
      { model: this.model, retry, maxRetries, delayMs, kind: error.kind, status: error.status },
      `LLM call failed, retrying: ${error.message}`,
    );
  }
}

/** The chat-completions URL under `baseUrl`, without user, password or query (which may hold a key). */
function endpointOf(baseUrl: string): string {
  try {
    const url = new URL(`${baseUrl.replace(/\/+$/, '')}/chat/completions`);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return '(the configured base URL)';
  }
}

/** The wire form of each list of tools offered: a turn offers the same list at every call. */
const wired = new WeakMap<readonly ToolDefinition[], ChatCompletionTool[]>();

function wireTools(tools: readonly ToolDefinition[]): ChatCompletionTool[] {
  let wire = wired.get(tools);
  if (!wire) {
    wire = tools.map(toWireTool);
    wired.set(tools, wire);
  }
  return wire;
}
