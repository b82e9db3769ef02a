/**
 * The questions of `pincer init` in a terminal (`@clack/prompts`): the model,
 * the channels and their tokens, who may use the bot, the owners. Each step checks what it was
 * given (unless `--no-check`) and offers to change a failed answer. Secrets
 * are asked in password prompts and never echoed.
 */
import { confirm, isCancel, log, multiselect, note, password, select, spinner, text } from '@clack/prompts';
import type { CheckResult } from './checks.js';
import {
  CHANNEL_NAMES,
  OWNER_IDS,
  ownerlessChannels,
  ownerProblem,
  ownersOnlyProblem,
  PROVIDER_NAMES,
  PROVIDERS,
  providerOf,
  splitOwners,
  tokenProblem,
  TOKENS,
  baseUrlProblem,
  API_ADDRESSES,
  apiAddressesOf,
  type Access,
  type ApiAddresses,
  type ChannelAnswers,
  type ChannelName,
  type ChannelTokens,
  type InitAnswers,
  type InitFlags,
  type Provider,
  type ProviderName,
  type TokenName,
} from './init-answers.js';
import { answersRedactor, anyFailed, checkChannelAnswers, checkModelAnswers, describeResult, listedModels } from './init-checks.js';

/** Thrown when a question is cancelled (Ctrl+C, Escape): nothing has been written. */
export class SetupCancelled extends Error {
  constructor() {
    super('setup cancelled, nothing written');
    this.name = 'SetupCancelled';
  }
}

/** A prompt's answer, or {@link SetupCancelled} when it was cancelled. */
function answered<T>(value: T): Exclude<T, symbol> {
  if (isCancel(value)) throw new SetupCancelled();
  return value as Exclude<T, symbol>;
}

/** The model part of the answers. */
export type ModelSetup = Pick<InitAnswers, 'provider' | 'baseUrl' | 'apiKey' | 'model'>;

const PROVIDER_HINTS = {
  openai: 'needs an API key',
  openrouter: 'many models behind one API key',
  ollama: `local, ${PROVIDERS.ollama.baseUrl}, no key`,
  llamacpp: `local llama-server, ${PROVIDERS.llamacpp.baseUrl}, no key`,
  other: 'vLLM, LM Studio, a proxy...: you give the URL',
} as const satisfies Record<ProviderName, string>;

/** Replaces existing files only when the person says so. */
export async function confirmReplacing(files: readonly string[]): Promise<boolean> {
  const named = files.join(' and ');
  return answered(
    await confirm({
      message: `${named} already ${files.length === 1 ? 'exists' : 'exist'}. Replace ${files.length === 1 ? 'it' : 'them'}? (variables in .env that init does not set are kept)`,
      initialValue: false,
    }),
  );
}

/** Shows check results the way doctor prints them, with the secrets redacted. */
function showResults(results: readonly CheckResult[], secrets: Partial<InitAnswers>): void {
  const redactor = answersRedactor(secrets);
  for (const result of results) {
    // The prompt's own symbol marks the status.
    const message = redactor.redact(describeResult(result, { mark: false }));
    if (result.status === 'fail') log.error(message);
    else if (result.status === 'warn') log.warn(message);
    else if (result.status === 'skip') log.info(message);
    else log.success(message);
  }
}

/** Runs `check` behind a spinner and shows what it found; true when nothing failed. */
async function checked(title: string, secrets: Partial<InitAnswers>, check: () => Promise<CheckResult[]>): Promise<boolean> {
  // Ctrl+C during a check: the spinner catches SIGINT, so the process ends here, before anything is written
  // (the check's request would otherwise hold it open until its time limit).
  const progress = spinner({ cancelMessage: new SetupCancelled().message, onCancel: () => process.exit(1) });
  progress.start(title);
  const results = await check();
  progress.stop(title);
  showResults(results, secrets);
  return !anyFailed(results);
}

/** After a failed check: ask again, or keep the answer as it is. */
async function retryAfterFailure(what: string): Promise<boolean> {
  const choice = answered(
    await select({
      message: `The ${what} check failed. What now?`,
      options: [
        { value: 'retry', label: 'Change the answers' },
        { value: 'keep', label: 'Keep them anyway', hint: 'pincer doctor will say the same later' },
      ],
    }),
  );
  return choice === 'retry';
}

// ---------------------------------------------------------------------------
// The model

/** Asks the provider, the endpoint, the key and the model, and checks them until they pass or are kept. */
export async function askModel(flags: InitFlags): Promise<ModelSetup> {
  let previous: Partial<ModelSetup> = { provider: providerOf(flags), baseUrl: flags.baseUrl, apiKey: flags.apiKey, model: flags.model };
  // Values given as flags are taken as they are, the first time round.
  let fromFlags = true;
  for (;;) {
    const setup = await askModelOnce(previous, fromFlags);
    fromFlags = false;
    if (!flags.check) return setup;
    const passed = await checked('Checking the model with a test call', setup, () => checkModelAnswers(setup));
    if (passed || !(await retryAfterFailure('model'))) return setup;
    previous = setup;
  }
}

async function askModelOnce(previous: Partial<ModelSetup>, fromFlags: boolean): Promise<ModelSetup> {
  const given = <K extends keyof ModelSetup>(key: K) => (fromFlags ? previous[key] : undefined);
  const provider = given('provider') ?? (await askProvider(previous.provider));
  const defaults: Provider = PROVIDERS[provider];
  const baseUrl = given('baseUrl') ?? (defaults.asksBaseUrl ? await askBaseUrl(defaults, previous.baseUrl) : defaults.baseUrl);
  const apiKey = given('apiKey') ?? (defaults.asksKey ? await askApiKey(defaults) : undefined);
  const model = given('model') ?? (await askModelName(defaults, baseUrl, apiKey, previous.model));
  return { provider, baseUrl, apiKey, model };
}

async function askProvider(initial: ProviderName | undefined): Promise<ProviderName> {
  return answered(
    await select({
      message: 'Which model provider?',
      options: PROVIDER_NAMES.map((name) => ({ value: name, label: PROVIDERS[name].label, hint: PROVIDER_HINTS[name] })),
      initialValue: initial,
    }),
  );
}

async function askBaseUrl(defaults: Provider, previous: string | undefined): Promise<string> {
  const fallback = defaults.baseUrl;
  const value = answered(
    await text({
      message: `The endpoint's base URL${fallback ? ' (Enter for the default)' : ''}`,
      placeholder: fallback ?? 'http://127.0.0.1:8000/v1',
      defaultValue: fallback,
      initialValue: previous,
      validate: (input) => {
        const url = input?.trim() || fallback;
        if (!url) return 'the base URL is needed, e.g. http://127.0.0.1:8000/v1';
        return baseUrlProblem(url);
      },
    }),
  );
  return value.trim() || fallback || '';
}

async function askApiKey(defaults: Provider): Promise<string | undefined> {
  const value = answered(
    await password({
      message: defaults.needsKey ? `${defaults.label} API key` : 'API key (Enter for none)',
      validate: (input) => (defaults.needsKey && !input?.trim() ? `${defaults.label} needs an API key` : undefined),
    }),
  );
  return value.trim() || undefined;
}

/** Offered after the listed models, to type a name the list lacks (no model is named by the empty string). */
const ANOTHER_MODEL = '';

async function askModelName(defaults: Provider, baseUrl: string | undefined, apiKey: string | undefined, previous: string | undefined): Promise<string> {
  const listed = defaults.listsModels && baseUrl ? await listedModels(baseUrl, apiKey) : [];
  const suggested = previous ?? defaults.model;
  if (listed.length) {
    const choice = answered(
      await select<string>({
        message: 'Which model?',
        options: [...listed.map((id) => ({ value: id, label: id })), { value: ANOTHER_MODEL, label: 'another model...' }],
        initialValue: listed.find((id) => id === suggested || id === `${suggested}:latest`),
        maxItems: 12,
      }),
    );
    if (choice !== ANOTHER_MODEL) return choice;
  }
  const value = answered(
    await text({
      message: `Model name${suggested ? ' (Enter for the suggestion)' : ''}`,
      placeholder: suggested ?? 'the name the server knows the model by',
      defaultValue: suggested,
      validate: (input) => (input?.trim() || suggested ? undefined : 'the model name is needed'),
    }),
  );
  return value.trim() || suggested || '';
}

// ---------------------------------------------------------------------------
// The channels

const CHANNEL_LABELS = {
  telegram: { label: 'Telegram', hint: 'a bot token from @BotFather' },
  discord: { label: 'Discord', hint: 'a bot token from the Developer Portal' },
  slack: { label: 'Slack', hint: 'a bot token and an app-level token for Socket Mode' },
} as const satisfies Record<ChannelName, { label: string; hint: string }>;

/** The tokens each channel needs. */
const CHANNEL_TOKENS = {
  telegram: [['telegram', 'telegramToken']],
  discord: [['discord', 'discordToken']],
  slack: [
    ['slackBot', 'slackBotToken'],
    ['slackApp', 'slackAppToken'],
  ],
} as const satisfies Record<ChannelName, ReadonlyArray<readonly [TokenName, keyof ChannelTokens]>>;

/** Asks which channels to set up, then each one's tokens, checking each channel until it passes or is kept. */
export async function askChannels(flags: InitFlags): Promise<{ channels: ChannelName[]; tokens: ChannelAnswers }> {
  const chosen = await chooseChannels(flags);
  // API addresses are not asked: they come from the flags or the environment, and are shown.
  const tokens: ChannelAnswers = apiAddressesOf(flags, chosen);
  for (const channel of chosen) {
    const address = tokens[API_ADDRESSES[channel].field];
    if (address) log.info(`${CHANNEL_LABELS[channel].label} API: ${address}`);
    Object.assign(tokens, await askChannelTokens(channel, flags, tokens));
  }
  return { channels: chosen, tokens };
}

const NO_CHANNEL = 'none';

async function chooseChannels(flags: InitFlags): Promise<ChannelName[]> {
  const given = CHANNEL_NAMES.filter((channel) => CHANNEL_TOKENS[channel].some(([, field]) => flags[field]));
  const picked = answered(
    await multiselect<ChannelName | typeof NO_CHANNEL>({
      message: 'Which chat platforms? (Space to pick, Enter to go on; the terminal chat always works)',
      options: [
        ...CHANNEL_NAMES.map((channel) => ({ value: channel, ...CHANNEL_LABELS[channel] })),
        { value: NO_CHANNEL, label: 'None', hint: 'the terminal only' },
      ],
      initialValues: given,
      required: false,
    }),
  );
  return CHANNEL_NAMES.filter((channel) => picked.includes(channel));
}

async function askChannelTokens(channel: ChannelName, flags: InitFlags, addresses: ApiAddresses): Promise<ChannelTokens> {
  let fromFlags = true;
  for (;;) {
    const tokens: ChannelTokens = {};
    for (const [token, field] of CHANNEL_TOKENS[channel]) tokens[field] = (fromFlags ? flags[field] : undefined) ?? (await askToken(token));
    fromFlags = false;
    if (!flags.check) return tokens;
    const passed = await checked(`Checking the ${CHANNEL_LABELS[channel].label} token`, tokens, () => checkChannelAnswers(channel, { ...addresses, ...tokens }));
    if (passed || !(await retryAfterFailure(CHANNEL_LABELS[channel].label))) return tokens;
  }
}

async function askToken(name: TokenName): Promise<string> {
  const token = TOKENS[name];
  const value = answered(
    await password({
      message: `${token.label} (${token.find})`,
      validate: (input) => (input?.trim() ? tokenProblem(name, input.trim()) : `the ${token.label} is needed`),
    }),
  );
  return value.trim();
}

// ---------------------------------------------------------------------------
// Who may use the bot

/** Asks whether the bot is for its owners only (the default) or for everyone who can reach it. */
export async function askAccess(flags: InitFlags): Promise<Access> {
  if (flags.access) return flags.access;
  return answered(
    await select<Access>({
      message: 'Who may use the bot on its chat platforms?',
      options: [
        { value: 'owners', label: 'Only the owners', hint: 'their ids go in each platform\'s allowlist; add people there later' },
        { value: 'everyone', label: 'Everyone who can reach it', hint: 'anyone who finds the bot can chat and use its tools, each in their own workspace' },
      ],
      initialValue: 'owners',
    }),
  );
}

// ---------------------------------------------------------------------------
// The owners

/**
 * Explains how to find one's id on each chosen platform, then asks the
 * owners; when only the owners may use the bot, each chosen platform needs one.
 */
export async function askOwners(flags: InitFlags, channels: readonly ChannelName[], access: Access = 'owners'): Promise<string[]> {
  const needed = (owners: readonly string[]) => (access === 'owners' ? ownerlessChannels(channels, owners).map(ownersOnlyProblem)[0] : undefined);
  const given = splitOwners(flags.owners ?? '');
  const wrong = given.map(ownerProblem).find(Boolean) ?? (given.length ? needed(given) : undefined);
  if (given.length && !wrong) return given;
  if (wrong) log.warn(`--owners: ${wrong}`);
  const platforms = [...channels, 'terminal' as const];
  const width = Math.max(...platforms.map((platform) => OWNER_IDS[platform].example.length));
  note(
    [
      'Owners may shut the bot down and change its global tool policy.',
      'Give each as platform:userId:',
      ...platforms.map((platform) => `  ${OWNER_IDS[platform].example.padEnd(width)}  ${OWNER_IDS[platform].find}`),
    ].join('\n'),
    'Owners',
  );
  // With the terminal alone, its one user is the obvious owner.
  const fallback = channels.length ? undefined : OWNER_IDS.terminal.example;
  const required = needed([]) !== undefined;
  const value = answered(
    await text({
      message: `Owners, comma-separated (${required ? `at least one on ${ownerlessChannels(channels, []).join(', ')}` : `Enter for ${fallback ?? 'none'}`})`,
      placeholder: fallback ?? OWNER_IDS[channels[0] ?? 'terminal'].example,
      defaultValue: fallback,
      initialValue: flags.owners,
      validate: (input) => {
        const owners = splitOwners(input ?? '');
        return owners.map(ownerProblem).find(Boolean) ?? needed(owners);
      },
    }),
  );
  const owners = splitOwners(value || fallback || '');
  if (owners.length === 0) log.warn('No owners: nobody can shut the bot down from a chat or change its global tool policy. Set PINCER_OWNERS in .env later.');
  return owners;
}

/** Whether to run `pincer doctor` now. */
export async function confirmDoctor(): Promise<boolean> {
  return answered(await confirm({ message: 'Run pincer doctor now to check the whole setup?', initialValue: true }));
}
