/**
 * The models a conversation may use: the configured default (`llm.model`) and
 * the entries of `llm.models`, each with its own endpoint, key and price where
 * it has them. A provider is made for an entry the first time it is used.
 */
import type { Config } from '../config/schema.js';
import { OpenAiProvider, type OpenAiProviderOptions } from './openai-provider.js';
import { PriceTable, type ModelPrice } from './pricing.js';
import type { LlmProvider } from './types.js';

/** One model as `/model` lists it. */
export interface ModelChoice {
  /** What `/model` shows and takes. */
  name: string;
  /** The model id sent to the endpoint. */
  model: string;
  /** The endpoint, or undefined for the default one (OpenAI's, or `llm.baseUrl`). */
  baseUrl: string | undefined;
  /** The variable its key comes from, when not `llm.apiKey`'s. */
  apiKeyEnv: string | undefined;
  /** Dollars per million tokens, or undefined when unknown. */
  price: { input: number; output: number } | undefined;
  isDefault: boolean;
  /** It sees images (`vision`), which are then sent to it. */
  vision: boolean;
}

/** Resolves a conversation's model name to a provider. */
export class ModelCatalog {
  private readonly choices: ModelChoice[];
  private readonly providers = new Map<string, LlmProvider>();
  private readonly prices: PriceTable;

  /**
   * @param defaultProvider the provider of `llm.model` (the app's, or one a test injects)
   * @param env where `apiKeyEnv` variables are read
   */
  constructor(
    private readonly llm: Config['llm'],
    defaultProvider: LlmProvider,
    private readonly options: OpenAiProviderOptions = {},
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.prices = new PriceTable(llm.prices);
    const defaultName = defaultProvider.model;
    this.providers.set(defaultName, defaultProvider);
    const listed = llm.models.map((entry) => this.choiceOf(entry, entry.name === defaultName));
    const hasDefault = listed.some((choice) => choice.isDefault);
    const defaultChoice: ModelChoice = {
      name: defaultName,
      model: defaultName,
      baseUrl: llm.baseUrl,
      apiKeyEnv: undefined,
      price: this.prices.priceOf(defaultName),
      isDefault: true,
      vision: llm.vision,
    };
    this.choices = hasDefault ? listed : [defaultChoice, ...listed];
  }

  /** Every model, the default first. */
  list(): readonly ModelChoice[] {
    return this.choices;
  }

  /** The model named `name` (exactly, or ignoring case), or undefined. */
  find(name: string): ModelChoice | undefined {
    return this.choices.find((choice) => choice.name === name) ?? this.choices.find((choice) => choice.name.toLowerCase() === name.toLowerCase());
  }

  /** The default model's name. */
  get defaultName(): string {
    return this.choices.find((choice) => choice.isDefault)!.name;
  }

  /** The provider for a conversation's chosen model; the default for none, or for a name no longer configured. */
  providerFor(name: string | undefined): LlmProvider {
    const choice = (name && this.find(name)) || this.find(this.defaultName)!;
    const made = this.providers.get(choice.name);
    if (made) return made;
    const entry = this.llm.models.find((candidate) => candidate.name === choice.name);
    const apiKey = entry?.apiKeyEnv ? this.env[entry.apiKeyEnv] : this.llm.apiKey;
    const prices = choice.price ? { ...this.llm.prices, [choice.model]: choice.price } : this.llm.prices;
    const provider = new OpenAiProvider(
      { ...this.llm, model: choice.model, baseUrl: choice.baseUrl, ...(apiKey ? { apiKey } : { apiKey: undefined }), prices },
      this.options,
    );
    this.providers.set(choice.name, provider);
    return provider;
  }

  /**
   * The price of a provider's model (`provider.model`): its `llm.models` entry's
   * price when it has one, else the price table's; undefined when unknown.
   */
  priceOf(model: string): ModelPrice | undefined {
    return this.choices.find((choice) => choice.model === model && choice.price)?.price ?? this.prices.priceOf(model);
  }

  /** Whether the model a conversation runs on (its choice, else the default) sees images. */
  seesImages(chosen: string | undefined): boolean {
    return this.find(this.nameFor(chosen))?.vision ?? false;
  }

  /** The name a conversation runs on: its choice while configured, else the default. */
  nameFor(chosen: string | undefined): string {
    return (chosen && this.find(chosen)?.name) || this.defaultName;
  }

  private choiceOf(entry: Config['llm']['models'][number], isDefault: boolean): ModelChoice {
    const model = entry.model ?? entry.name;
    return {
      name: entry.name,
      model,
      baseUrl: entry.baseUrl ?? this.llm.baseUrl,
      apiKeyEnv: entry.apiKeyEnv,
      price: entry.price ?? this.prices.priceOf(model),
      isDefault,
      // `llm.vision` speaks of the default model, also when it is listed.
      vision: entry.vision || (isDefault && this.llm.vision),
    };
  }
}
