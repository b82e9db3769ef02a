/**
 * What `pincer init` gathers (the provider, the model, the channels' tokens,
 * who may use the bot, the owners), the flags that fill it in without
 * questions, and the rules a value must follow. Pure: no prompts, no files,
 * no network.
 */
import { DefaultTerminalChannelOptions } from '../channels/terminal/options.js';
import { DiscordConfigSchema, LlmConfigSchema, PLATFORM_LIST, PLATFORMS, SlackConfigSchema, TelegramConfigSchema } from '../config/schema.js';

/** The model providers `pincer init` knows; `other` is any OpenAI-compatible endpoint. */
export const PROVIDER_NAMES = ['openai', 'openrouter', 'ollama', 'llamacpp', 'other'] as const;

/** One of {@link PROVIDER_NAMES}. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** What init knows of a provider before asking anything. */
export interface Provider {
  label: string;
  /** Its endpoint; unset: OpenAI's own (for `openai`) or asked (for `other`). */
  baseUrl?: string;
  /** Whether the provider refuses requests without an API key. */
  needsKey: boolean;
  /** Whether a key is asked at all (a local server needs none). */
  asksKey: boolean;
  /** Whether the endpoint is asked: a local server may listen elsewhere. */
  asksBaseUrl: boolean;
  /** The model suggested, and taken by `--yes` when `--model` is not given. */
  model?: string;
  /** Whether the endpoint's model list is worth offering (local servers name their own models). */
  listsModels: boolean;
}

/** Every provider, with its defaults. */
export const PROVIDERS = {
  openai: { label: 'OpenAI', needsKey: true, asksKey: true, asksBaseUrl: false, model: 'gpt-4o-mini', listsModels: false },
  openrouter: {
    label: 'OpenRouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    needsKey: true,
    asksKey: true,
    asksBaseUrl: false,
    model: 'openai/gpt-4o-mini',
    listsModels: false,
  },
  ollama: { label: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', needsKey: false, asksKey: false, asksBaseUrl: true, model: 'llama3.1', listsModels: true },
  llamacpp: { label: 'llama.cpp', baseUrl: 'http://127.0.0.1:8080/v1', needsKey: false, asksKey: false, asksBaseUrl: true, listsModels: true },
  other: { label: 'another OpenAI-compatible endpoint', needsKey: false, asksKey: true, asksBaseUrl: true, listsModels: true },
} as const satisfies Record<ProviderName, Provider>;

/** The chat platforms init sets up; the terminal needs no setup. */
export const CHANNEL_NAMES = ['telegram', 'discord', 'slack'] as const;

/** One of {@link CHANNEL_NAMES}. */
export type ChannelName = (typeof CHANNEL_NAMES)[number];

/**
 * Who may use the bot on its chat platforms: only the owners (each platform's
 * allowlist holds the owners' ids there), or everyone who can reach it (empty
 * allowlists). The terminal is its owner's alone either way.
 */
export const ACCESS_CHOICES = ['owners', 'everyone'] as const;

/** One of {@link ACCESS_CHOICES}. */
export type Access = (typeof ACCESS_CHOICES)[number];

/** Everything init writes. Secrets are among them: never print an `InitAnswers` as it is. */
export interface InitAnswers {
  provider: ProviderName;
  /** Unset: OpenAI's endpoint. */
  baseUrl?: string;
  apiKey?: string;
  model: string;
  telegramToken?: string;
  discordToken?: string;
  slackBotToken?: string;
  slackAppToken?: string;
  /** Where each platform's API is reached when not at its public address (a self-hosted Bot API, a proxy, a test server). */
  telegramApiRoot?: string;
  discordApiUrl?: string;
  slackApiUrl?: string;
  /** `platform:userId` entries. */
  owners: string[];
  access: Access;
}

/** The channels' tokens among the answers. */
export type ChannelTokens = Pick<InitAnswers, 'telegramToken' | 'discordToken' | 'slackBotToken' | 'slackAppToken'>;

/** The channels' API addresses among the answers. */
export type ApiAddresses = Pick<InitAnswers, 'telegramApiRoot' | 'discordApiUrl' | 'slackApiUrl'>;

/** What reaches a channel: its tokens and its API address. */
export type ChannelAnswers = ChannelTokens & ApiAddresses;

/**
 * The API address of each platform: the flag that sets it, the variable the
 * bot reads it from (written to `.env`), and the schema rule it must follow.
 * Without the flag, the variable's value in this environment is taken, as
 * the bot would take it.
 */
export const API_ADDRESSES = {
  telegram: { field: 'telegramApiRoot', flag: 'telegram-api-root', variable: 'TELEGRAM_API_ROOT', schema: TelegramConfigSchema.pick({ apiRoot: true }), key: 'apiRoot' },
  discord: { field: 'discordApiUrl', flag: 'discord-api-url', variable: 'DISCORD_API_URL', schema: DiscordConfigSchema.pick({ apiUrl: true }), key: 'apiUrl' },
  slack: { field: 'slackApiUrl', flag: 'slack-api-url', variable: 'SLACK_API_URL', schema: SlackConfigSchema.pick({ apiUrl: true }), key: 'apiUrl' },
} as const;

/** Why `url` cannot be `channel`'s API address (the config schema's own rule), or undefined. */
export function apiAddressProblem(channel: ChannelName, url: string): string | undefined {
  const address = API_ADDRESSES[channel];
  const result = address.schema.safeParse({ [address.key]: url });
  return result.success ? undefined : result.error.issues[0]?.message;
}

/** The API addresses of `channels` among `flags`; the other channels' are left out. */
export function apiAddressesOf(flags: ApiAddresses, channels: readonly ChannelName[]): ApiAddresses {
  const addresses: ApiAddresses = {};
  for (const channel of channels) addresses[API_ADDRESSES[channel].field] = flags[API_ADDRESSES[channel].field];
  return addresses;
}

/** The flags of `pincer init`, as commander hands them over. */
export interface InitFlags {
  provider?: ProviderName;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  telegramToken?: string;
  discordToken?: string;
  slackBotToken?: string;
  slackAppToken?: string;
  telegramApiRoot?: string;
  discordApiUrl?: string;
  slackApiUrl?: string;
  owners?: string;
  access?: Access;
  /** Ask nothing: take the flags and the defaults, and replace existing files. */
  yes: boolean;
  /** Call the services to check the key, the model and the tokens. */
  check: boolean;
}

/** The options commander hands over for `pincer init` (see `src/main.ts`); read them with {@link readFlags}. */
export interface InitOptions {
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  telegramToken?: string;
  discordToken?: string;
  slackBotToken?: string;
  slackAppToken?: string;
  telegramApiRoot?: string;
  discordApiUrl?: string;
  slackApiUrl?: string;
  owners?: string;
  access?: string;
  yes?: boolean;
  /** False with `--no-check`. */
  check?: boolean;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/**
 * Reads commander's options into {@link InitFlags}; blank values count as not
 * given. An API address not given as a flag is taken from `env` (see
 * {@link API_ADDRESSES}).
 */
export function readFlags(options: InitOptions, env: NodeJS.ProcessEnv = process.env): InitFlags {
  const provider = text(options.provider);
  const access = text(options.access);
  return {
    provider: PROVIDER_NAMES.find((name) => name === provider),
    baseUrl: text(options.baseUrl),
    apiKey: text(options.apiKey),
    model: text(options.model),
    telegramToken: text(options.telegramToken),
    discordToken: text(options.discordToken),
    slackBotToken: text(options.slackBotToken),
    slackAppToken: text(options.slackAppToken),
    telegramApiRoot: text(options.telegramApiRoot) ?? text(env.TELEGRAM_API_ROOT),
    discordApiUrl: text(options.discordApiUrl) ?? text(env.DISCORD_API_URL),
    slackApiUrl: text(options.slackApiUrl) ?? text(env.SLACK_API_URL),
    owners: text(options.owners),
    access: ACCESS_CHOICES.find((choice) => choice === access),
    yes: options.yes === true,
    check: options.check !== false,
  };
}

/** The provider the flags name, or `other` when only an endpoint is given. */
export function providerOf(flags: InitFlags): ProviderName | undefined {
  return flags.provider ?? (flags.baseUrl ? 'other' : undefined);
}

/**
 * What a run without questions lacks or got wrong, one line per flag; empty
 * when the flags are enough to write the files.
 */
export function flagProblems(flags: InitFlags): string[] {
  const problems: string[] = [];
  const provider = providerOf(flags);
  if (!provider) problems.push(`--provider: missing (one of ${PROVIDER_NAMES.join(', ')})`);
  else {
    const defaults: Provider = PROVIDERS[provider];
    if (!flags.baseUrl && !defaults.baseUrl && provider !== 'openai') problems.push(`--base-url: missing (the endpoint of ${defaults.label}, e.g. http://127.0.0.1:8000/v1)`);
    if (defaults.needsKey && !flags.apiKey) problems.push(`--api-key: missing (${defaults.label} needs an API key)`);
    if (!flags.model && !defaults.model) problems.push(`--model: missing (the model name ${defaults.label} serves)`);
  }
  const urlProblem = flags.baseUrl ? baseUrlProblem(flags.baseUrl) : undefined;
  if (urlProblem) problems.push(`--base-url: ${urlProblem}`);
  for (const [token, value] of TOKEN_FLAGS.map(([name, flag]) => [name, flags[flag]] as const)) {
    const problem = value ? tokenProblem(token, value) : undefined;
    if (problem) problems.push(`--${TOKENS[token].flag}: ${problem}`);
  }
  for (const channel of CHANNEL_NAMES) {
    const { field, flag, variable } = API_ADDRESSES[channel];
    const problem = flags[field] ? apiAddressProblem(channel, flags[field]) : undefined;
    if (problem) problems.push(`--${flag} (or ${variable}): ${problem}`);
  }
  if (flags.slackBotToken && !flags.slackAppToken) problems.push('--slack-app-token: missing (Slack needs the app-level token, xapp-, with the bot token)');
  if (flags.slackAppToken && !flags.slackBotToken) problems.push('--slack-bot-token: missing (Slack needs the bot token, xoxb-, with the app-level token)');
  const owners = splitOwners(flags.owners ?? '');
  problems.push(...owners.flatMap((entry) => ownerProblem(entry) ?? []).map((problem) => `--owners: ${problem}`));
  const ownerless = (flags.access ?? 'owners') === 'owners' ? ownerlessChannels(channelsGiven(flags), owners) : [];
  problems.push(...ownerless.map((channel) => `--owners: ${ownersOnlyProblem(channel)}, or pass --access everyone`));
  return problems;
}

/** The channels whose tokens are among `tokens`. */
export function channelsGiven(tokens: ChannelTokens): ChannelName[] {
  const given: ChannelName[] = [];
  if (tokens.telegramToken) given.push('telegram');
  if (tokens.discordToken) given.push('discord');
  if (tokens.slackBotToken) given.push('slack');
  return given;
}

/** The channels among `channels` that no owner belongs to: with access for the owners only, nobody could use them. */
export function ownerlessChannels(channels: readonly ChannelName[], owners: readonly string[]): ChannelName[] {
  return channels.filter((channel) => !owners.some((owner) => owner.startsWith(`${channel}:`)));
}

/** Why owners-only access needs an owner on `channel`. */
export function ownersOnlyProblem(channel: ChannelName): string {
  const rule = OWNER_IDS[channel];
  return `only the owners may use the bot, and none is on ${channel}: add yours (e.g. ${rule.example}: ${rule.find})`;
}

/** The answers the flags and the defaults give; call only when {@link flagProblems} found none. */
export function answersFromFlags(flags: InitFlags): InitAnswers {
  const provider = providerOf(flags) ?? 'openai';
  const defaults: Provider = PROVIDERS[provider];
  return {
    ...apiAddressesOf(flags, channelsGiven(flags)),
    provider,
    baseUrl: flags.baseUrl ?? defaults.baseUrl,
    apiKey: flags.apiKey,
    model: flags.model ?? defaults.model ?? '',
    telegramToken: flags.telegramToken,
    discordToken: flags.discordToken,
    slackBotToken: flags.slackBotToken,
    slackAppToken: flags.slackAppToken,
    owners: splitOwners(flags.owners ?? ''),
    access: flags.access ?? 'owners',
  };
}

/** The tokens init asks for: the flag giving each, where a person finds it, and how it looks. */
export const TOKENS = {
  telegram: { flag: 'telegram-token', label: 'Telegram bot token', find: 'from @BotFather (/newbot, or /token for an existing bot)', shape: /^\d+:[\w-]+$/, looks: '123456789:AA...' },
  discord: { flag: 'discord-token', label: 'Discord bot token', find: 'Developer Portal > your application > Bot > Reset Token', shape: /^\S{20,}$/, looks: 'a long string without spaces' },
  slackBot: { flag: 'slack-bot-token', label: 'Slack bot token', find: 'your app > OAuth & Permissions > Bot User OAuth Token', shape: /^xoxb-\S+$/, looks: 'xoxb-...' },
  slackApp: {
    flag: 'slack-app-token',
    label: 'Slack app-level token',
    find: 'your app > Basic Information > App-Level Tokens, with the connections:write scope (Socket Mode)',
    shape: /^xapp-\S+$/,
    looks: 'xapp-...',
  },
} as const satisfies Record<string, { flag: string; label: string; find: string; shape: RegExp; looks: string }>;

/** One of the {@link TOKENS}. */
export type TokenName = keyof typeof TOKENS;

/** Which field of the flags (and of the answers) holds each token. */
export const TOKEN_FLAGS = [
  ['telegram', 'telegramToken'],
  ['discord', 'discordToken'],
  ['slackBot', 'slackBotToken'],
  ['slackApp', 'slackAppToken'],
] as const satisfies ReadonlyArray<readonly [TokenName, keyof InitFlags & keyof InitAnswers]>;

/** Why `value` cannot be the token `name` (a paste of the wrong one, a cut-off one), or undefined. Never quotes the value. */
export function tokenProblem(name: TokenName, value: string): string | undefined {
  const token = TOKENS[name];
  return token.shape.test(value) ? undefined : `this does not look like a ${token.label} (${token.looks}); it is ${token.find}`;
}

/** Why `url` cannot be the model endpoint (the config schema's own rule), or undefined. */
export function baseUrlProblem(url: string): string | undefined {
  const result = LlmConfigSchema.pick({ baseUrl: true }).safeParse({ baseUrl: url });
  return result.success ? undefined : result.error.issues[0]?.message;
}

/** One of the platforms owners can belong to. */
type OwnerPlatform = (typeof PLATFORMS)[number];

/** How a user id looks on each platform, and where a person finds their own. */
export const OWNER_IDS = {
  telegram: { shape: /^\d+$/, example: 'telegram:123456789', find: 'your number: message @userinfobot on Telegram to see it' },
  discord: {
    shape: /^\d{15,21}$/,
    example: 'discord:123456789012345678',
    find: 'Settings > Advanced > Developer Mode on, then right-click your name > Copy User ID',
  },
  slack: { shape: /^[UW][A-Z0-9]+$/, example: 'slack:U01ABCDEF', find: 'your profile > the ⋮ menu > Copy member ID' },
  // The terminal has one user, whoever started the process, always under the same id.
  terminal: {
    shape: new RegExp(`^${DefaultTerminalChannelOptions.userId}$`),
    example: `terminal:${DefaultTerminalChannelOptions.userId}`,
    find: 'whoever runs pincer in a terminal (always this id)',
  },
} as const satisfies Record<OwnerPlatform, { shape: RegExp; example: string; find: string }>;

/** `telegram:42, discord:1234` as entries. */
export function splitOwners(list: string): string[] {
  return list
    .split(/[,\s]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** Why `entry` is not a `platform:userId` the bot can recognise, or undefined. */
export function ownerProblem(entry: string): string | undefined {
  const match = /^([^:\s]+):(\S+)$/.exec(entry);
  if (!match) return `${JSON.stringify(entry)} is not platform:userId (e.g. telegram:123456789)`;
  const [, platform, id] = match as unknown as [string, string, string];
  if (!(PLATFORMS as readonly string[]).includes(platform)) return `${JSON.stringify(entry)}: unknown platform "${platform}"; expected ${PLATFORM_LIST}`;
  const rule = OWNER_IDS[platform as OwnerPlatform];
  if (!rule.shape.test(id)) return `${JSON.stringify(entry)}: not a ${platform} user id (e.g. ${rule.example}: ${rule.find})`;
  return undefined;
}
