/**
 * What a model call costs. A small built-in table of common hosted models, in US
 * dollars per million tokens, extended or overridden by `llm.prices` in the config.
 * Local models have no price and cost 0.
 */
import { IMAGE_TOKEN_ESTIMATE, imagesSent, type LlmRequest, type Usage } from './types.js';

/** Price of a model in US dollars per million tokens (the shape of `llm.prices` entries). */
export interface ModelPrice {
  input: number;
  output: number;
  /** Price of prompt tokens served from the provider's cache; defaults to `input`. */
  cachedInput?: number;
}

/** Public list prices of common models at the time of writing; config entries win. */
export const BUILTIN_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cachedInput: 0.005 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
};

/** Looks up prices by model name; see {@link PriceTable.priceOf} for the matching rules. */
export class PriceTable {
  private readonly prices: ReadonlyMap<string, ModelPrice>;

  /** @param overrides `llm.prices` from the config, applied over the built-in table */
  constructor(overrides: Readonly<Record<string, ModelPrice>> = {}) {
    this.prices = new Map(Object.entries({ ...BUILTIN_PRICES, ...overrides }));
  }

  /**
   * The price of `model`: an exact entry, else the same without a router prefix
   * (`openai/gpt-4o` on OpenRouter), else the longest entry the name starts with
   * (dated snapshots such as `gpt-4o-2024-08-06`). Undefined when nothing matches.
   */
  priceOf(model: string): ModelPrice | undefined {
    const exact = this.prices.get(model);
    if (exact) return exact;
    const bare = model.slice(model.lastIndexOf('/') + 1);
    return this.prices.get(bare) ?? this.longestPrefix(bare);
  }

  /** Cost of one call in US dollars; 0 for a model without a price. */
  costOf(models: string[], usage: Usage): number {
    const price = models.map((model) => this.priceOf(model)).find((found) => found !== undefined);
    return price ? costFromPrice(price, usage) : 0;
  }

  private longestPrefix(model: string): ModelPrice | undefined {
    let best: string | undefined;
    for (const name of this.prices.keys()) {
      if (model.startsWith(`${name}-`) && (!best || name.length > best.length)) best = name;
    }
    return best === undefined ? undefined : this.prices.get(best);
  }
}

/** Cost in US dollars of `usage` at `price`; cached prompt tokens are billed at the cached rate. */
export function costFromPrice(price: ModelPrice, usage: Usage): number {
  const cached = Math.min(usage.cachedTokens, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const dollars = fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.outputTokens * price.output;
  return dollars / 1_000_000;
}

/**
 * Characters per token assumed when a prompt is estimated before it is sent:
 * fewer than the usual four of English prose, so that code, JSON and other
 * languages are not underestimated.
 */
const CHARS_PER_TOKEN = 3;

/** Tokens a message costs beyond its text (role, separators), as providers count them. */
const TOKENS_PER_MESSAGE = 8;

/**
 * A conservative estimate, in US dollars, of what `request` will cost at
 * `price` before it is sent: its prompt (messages and tool definitions, from
 * their characters) at the input rate, plus the whole output allowance
 * (`maxTokens`, or `defaultMaxTokens` when the request names none) at the
 * output rate. 0 for a model without a price.
 */
export function estimateCost(price: ModelPrice | undefined, request: LlmRequest, defaultMaxTokens: number): number {
  if (!price) return 0;
  let chars = 0;
  for (const message of request.messages) {
    chars += message.content?.length ?? 0;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length;
  }
  for (const tool of request.tools ?? []) chars += tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length;
  const images = request.messages.reduce((sum, message) => sum + imagesSent(message), 0);
  const inputTokens = Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * request.messages.length + IMAGE_TOKEN_ESTIMATE * images;
  return costFromPrice(price, { inputTokens, outputTokens: request.maxTokens ?? defaultMaxTokens, cachedTokens: 0 });
}
