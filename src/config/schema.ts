/**
 * The configuration schema: the single source of truth for every key, its
 * default and its meaning. `config/pincer.example.yaml` documents the same keys.
 * Objects are strict: an unknown key is an error, never silently ignored.
 */
import { z } from 'zod';
import { McpConfigSchema } from './mcp-schema.js';
import { httpUrl } from './url.js';
import { LOG_LEVELS } from '../log.js';
import { STORE_SCHEMES } from '../store/url.js';

export { DEFAULT_MCP_LIMITS, McpConfigSchema, McpLimitsSchema, McpServerSchema } from './mcp-schema.js';

/** Platforms whose users can be named in `owners` and `admins`. */
export const PLATFORMS = ['telegram', 'discord', 'slack', 'terminal'] as const;

/** `telegram, discord, slack or terminal`, for messages. */
export const PLATFORM_LIST = `${PLATFORMS.slice(0, -1).join(', ')} or ${PLATFORMS.at(-1)!}`;

/**
 * A platform id, kept as its exact decimal text. YAML numbers are welcome (the loader
 * reads big integers exactly); a JSON number past 2^53 has already lost digits, so it
 * is refused rather than silently matching nobody.
 */
const NOT_AN_ID = 'expected an id: text or a whole number';
const id = z
  .union(
    [
      z.string(),
      z.number().int({
        error: (issue) =>
          Number.isInteger(issue.input) ? 'a number this large loses digits (exact only up to 9007199254740991); write the id in quotes' : NOT_AN_ID,
      }),
    ],
    { error: NOT_AN_ID },
  )
  .transform(String);

const ids = z.array(id).default([]);

/**
 * `platform:userId`, as in PINCER_OWNERS; a bare id is refused because it could be
 * anyone's on another platform. Which platforms exist is checked by the loader
 * (an embedding app may add channels of its own).
 */
const platformUser = id.refine((value) => /^[^:\s]+:\S+$/.test(value), {
  error: (issue) => `expected platform:userId (e.g. telegram:${String(issue.input)}) with platform ${PLATFORM_LIST}`,
});


/** A store URL whose scheme the store supports. */
const storeUrl = z.string().refine((value) => STORE_SCHEMES.some((scheme) => value.startsWith(`${scheme}://`)), {
  message: 'unsupported store URL; expected sqlite://path, redis://host:port or postgres://user@host/db',
});

/** Price of a model in US dollars per million tokens. */
export const PriceSchema = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
});

/**
 * A model people may switch a conversation to with `/model`: its name, and
 * where it differs from `llm` its endpoint, the variable holding its key, and
 * its price. Keys are never written in the config, only the variable's name.
 */
export const ModelEntrySchema = z.strictObject({
  /** What `/model` shows and takes; also the model id sent, unless `model` is set. */
  name: z.string().min(1).regex(/^[\w.:/@-]+$/, 'letters, digits and . : / @ _ - only'),
  /** The model id the endpoint knows, when it differs from `name`. */
  model: z.string().min(1).optional(),
  baseUrl: httpUrl().optional(),
  /** The environment variable holding this endpoint's API key (default: `llm.apiKey`). */
  apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name, e.g. OPENROUTER_API_KEY').optional(),
  price: PriceSchema.optional(),
  /** The model sees images: they are sent to it as image parts (SPEC section 17); otherwise it is told one was sent. */
  vision: z.boolean().default(false),
});

/** Background jobs (SPEC section 12). */
export const JobsConfigSchema = z
  .strictObject({
    /** Jobs running at once; more wait their turn. */
    maxParallel: z.number().int().min(1).max(1_000).default(4),
    /** Whether a job's call outside its allowed tools asks its owner (in a DM) instead of being refused. */
    askOwner: z.boolean().default(true),
    /** Repairs of a stuck job (one that timed out) before it fails. */
    maxRepairAttempts: z.number().int().min(0).max(10).default(2),
    /** Defaults of `create_job`'s `maxIterations` and `timeoutMinutes`. */
    maxIterations: z.number().int().min(1).max(500).default(30),
    timeoutMinutes: z.number().positive().max(24 * 60).default(30),
    /** The most `maxIterations` and `timeoutMinutes` a model may ask for; the defaults above stay within them. */
    maxIterationsLimit: z.number().int().min(1).max(500).default(100),
    maxTimeoutMinutes: z.number().positive().max(24 * 60).default(240),
    /** Jobs of one person that have not ended (pending, running, waiting, stuck); another is refused. */
    maxActivePerUser: z.number().int().min(1).max(1_000).default(5),
  })
  .superRefine((jobs, ctx) => {
    // A default above its bound would make every job that takes the default a refused one.
    if (jobs.maxIterations > jobs.maxIterationsLimit) {
      ctx.addIssue({ code: 'custom', path: ['maxIterations'], message: `must be at most jobs.maxIterationsLimit (${jobs.maxIterationsLimit})` });
    }
    if (jobs.timeoutMinutes > jobs.maxTimeoutMinutes) {
      ctx.addIssue({ code: 'custom', path: ['timeoutMinutes'], message: `must be at most jobs.maxTimeoutMinutes (${jobs.maxTimeoutMinutes})` });
    }
  });

/** Routines: reminders and scheduled work (SPEC section 13). */
export const RoutinesConfigSchema = z.strictObject({
  /** The time zone of routines that name none (IANA, e.g. Europe/Berlin). */
  timezone: z.string().default('UTC'),
  /** A firing missed by less than this (a duration: 30m, 1h, 1d) runs once at start; older ones are skipped. */
  catchUpWindow: z.string().regex(/^(\d+(\.\d+)?[smhdw])+$/, 'a duration such as 30m, 1h or 1d').default('1h'),
  /** The shortest time between two firings of one routine. */
  minIntervalSeconds: z.number().int().min(1).default(60),
  /** Routines one person may have; another is refused. */
  maxPerUser: z.number().int().min(1).max(10_000).default(20),
});

/** Files people attach to messages (SPEC section 17): downloaded when the turn runs, within these limits. */
export const AttachmentsConfigSchema = z.strictObject({
  /** The largest file taken, in bytes (Telegram lets bots download at most 20 MB whatever this says); also the largest `files_send` sends. */
  maxBytes: z.number().int().min(1).default(20 * 1024 * 1024),
  /** All the files of one message together, in bytes. */
  maxBytesPerMessage: z.number().int().min(1).default(50 * 1024 * 1024),
  /** What one person may send in a day (UTC), in bytes. */
  maxBytesPerUserPerDay: z.number().int().min(1).default(200 * 1024 * 1024),
  /** How long one file's download may take. */
  downloadTimeoutMs: z.number().int().min(1_000).max(600_000).default(60_000),
  /** An image sent to a model that sees is downscaled to at most this many pixels on its long side. */
  maxImagePixels: z.number().int().min(64).max(8_192).default(1568),
  /** The images of only this many latest turns (the running one included) are sent; older ones are named in one line. */
  keepImages: z.number().int().min(1).max(100).default(3),
  /** Whether the person sees what their voice message was heard as (`🎤 "…"`) at the top of the answer. */
  showTranscript: z.boolean().default(true),
});

/**
 * Transcription of voice and audio through an OpenAI-compatible
 * `/v1/audio/transcriptions` (OpenAI's `whisper-1`, a whisper.cpp or
 * faster-whisper server): the default model's endpoint and key unless given.
 */
export const TranscriptionConfigSchema = z.strictObject({
  model: z.string().min(1),
  baseUrl: httpUrl().optional(),
  /** The environment variable holding this endpoint's API key (default: `llm.apiKey`). */
  apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name, e.g. WHISPER_API_KEY').optional(),
  /** How long one transcription may take. */
  timeoutMs: z.number().int().min(1_000).max(600_000).default(60_000),
});

/** The LLM endpoint (any OpenAI-compatible Chat Completions API). */
export const LlmConfigSchema = z.strictObject({
  baseUrl: httpUrl().optional(),
  apiKey: z.string().optional(),
  model: z.string().min(1).optional(),
  maxTokens: z.number().int().positive().default(4096),
  temperature: z.number().min(0).max(2).optional(),
  timeoutMs: z.number().int().positive().default(120_000),
  maxRetries: z.number().int().min(0).max(10).default(4),
  retryBaseDelayMs: z.number().int().positive().default(500),
  retryMaxDelayMs: z.number().int().positive().default(30_000),
  stream: z.boolean().default(true),
  prices: z.record(z.string(), PriceSchema).default({}),
  /** Models a conversation may switch to with `/model`; `model` above is the default and always listed. */
  models: z.array(ModelEntrySchema).default([]),
  /** The default model (`model` above) sees images; an entry of `models` says so with its own `vision`. */
  vision: z.boolean().default(false),
  /** Voice and audio transcription; without it the bot says it cannot listen to audio. */
  transcription: TranscriptionConfigSchema.optional(),
});

/** The loop guards' defaults (SPEC section 4). */
export const DEFAULT_LOOP_GUARDS = {
  similarity: 0.8,
  similarCallLimit: 3,
  windowSize: 10,
  windowRepeats: 3,
  maxCycleLength: 5,
  consecutiveFailures: 5,
  maxContinuations: 3,
  verifyActions: true,
  selfCheck: false,
} as const;

/** Thresholds of the loop guards: the detectors, continuation of cut answers, checks of claims. */
export const LoopGuardsSchema = z.strictObject({
  similarity: z.number().min(0.5).max(1).default(DEFAULT_LOOP_GUARDS.similarity),
  similarCallLimit: z.number().int().min(2).max(50).default(DEFAULT_LOOP_GUARDS.similarCallLimit),
  windowSize: z.number().int().min(2).max(100).default(DEFAULT_LOOP_GUARDS.windowSize),
  windowRepeats: z.number().int().min(2).max(100).default(DEFAULT_LOOP_GUARDS.windowRepeats),
  maxCycleLength: z.number().int().min(2).max(20).default(DEFAULT_LOOP_GUARDS.maxCycleLength),
  consecutiveFailures: z.number().int().min(2).max(100).default(DEFAULT_LOOP_GUARDS.consecutiveFailures),
  maxContinuations: z.number().int().min(0).max(10).default(DEFAULT_LOOP_GUARDS.maxContinuations),
  verifyActions: z.boolean().default(DEFAULT_LOOP_GUARDS.verifyActions),
  selfCheck: z.boolean().default(DEFAULT_LOOP_GUARDS.selfCheck),
});

/** The loop guards' settings once defaults are applied (`agent.loopGuards`). */
export type LoopGuardsConfig = z.infer<typeof LoopGuardsSchema>;

/** The conversation runtime and the agentic loop. */
export const AgentConfigSchema = z.strictObject({
  name: z.string().default('pincer'),
  systemPrompt: z.string().default(''),
  maxToolIterations: z.number().int().min(1).max(100).default(10),
  maxToolIntentNudges: z.number().int().min(0).max(10).default(2),
  maxConcurrentTurns: z.number().int().min(1).max(10_000).default(16),
  maxContextTokens: z.number().int().min(1000).default(32_000),
  compactThreshold: z.number().min(0.1).max(1).default(0.8),
  keepRecentMessages: z.number().int().min(2).default(12),
  groupActivation: z.enum(['mention', 'always']).default('mention'),
  groupContextMessages: z.number().int().min(0).max(500).default(20),
  maxInboundChars: z.number().int().min(100).default(16_000),
  maxQueuedPerThread: z.number().int().min(1).default(100),
  userMessagesPerMinute: z.number().int().min(1).default(30),
  dailyCostLimitUsd: z.number().nonnegative().default(0),
  approvalTimeoutMs: z.number().int().min(1000).default(600_000),
  shutdownTimeoutMs: z.number().int().min(100).default(10_000),
  toolConcurrency: z.number().int().min(1).max(64).default(4),
  /** Tool calls one model response may make; the calls beyond it get an error result and do not run. */
  maxToolCallsPerBatch: z.number().int().min(1).max(256).default(16),
  loopGuards: LoopGuardsSchema.default(DEFAULT_LOOP_GUARDS),
});

/**
 * A folder the owner shares with everyone: every workspace shows it as
 * `shared/<name>`, read-only unless `writable`.
 */
export const SharedFolderSchema = z.strictObject({
  /** Its name under `shared/`. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, '1-64 letters, digits, _ or -, starting with a letter or digit'),
  /** The folder on this machine (relative paths: from the working folder). */
  path: z.string().min(1),
  writable: z.boolean().default(false),
});

/** The file tools: what is shared between workspaces. */
export const FilesConfigSchema = z.strictObject({
  shared: z
    .array(SharedFolderSchema)
    .default([])
    .superRefine((folders, ctx) => {
      const names = folders.map((folder) => folder.name);
      for (const [index, name] of names.entries()) {
        if (names.indexOf(name) !== index) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `the name "${name}" is given twice` });
      }
    }),
});

/** Built-in tools. */
export const ToolsConfigSchema = z.strictObject({
  /** The folder holding every workspace (`users/...`, `chats/...`). */
  workspaceDir: z.string().optional(),
  files: FilesConfigSchema.default({ shared: [] }),
  maxOutputChars: z.number().int().min(1000).default(30_000),
  http: z
    .strictObject({
      allowHosts: z.array(z.string()).default([]),
      maxBytes: z.number().int().positive().default(2_000_000),
      timeoutMs: z.number().int().positive().default(15_000),
    })
    .default({ allowHosts: [], maxBytes: 2_000_000, timeoutMs: 15_000 }),
  shell: z
    .strictObject({
      enabled: z.boolean().default(false),
      timeoutMs: z.number().int().positive().default(30_000),
      maxOutputBytes: z.number().int().positive().default(200_000),
    })
    .default({ enabled: false, timeoutMs: 30_000, maxOutputBytes: 200_000 }),
});

/** Telegram (grammY). */
export const TelegramConfigSchema = z.strictObject({
  token: z.string().optional(),
  apiRoot: httpUrl()
    .refine((url) => !url.endsWith('/'), 'must not end with a slash')
    .optional(),
  mode: z.enum(['polling', 'webhook']).default('polling'),
  webhook: z
    .strictObject({
      url: httpUrl().optional(),
      host: z.string().default('0.0.0.0'),
      port: z.number().int().min(0).max(65_535).default(8443),
      path: z.string().default('/telegram'),
      secretToken: z.string().optional(),
    })
    .default({ host: '0.0.0.0', port: 8443, path: '/telegram' }),
  allowedUsers: ids,
  allowedChats: ids,
  deniedReply: z.string().optional(),
});

/** Discord (discord.js). */
export const DiscordConfigSchema = z.strictObject({
  token: z.string().optional(),
  apiUrl: httpUrl().optional(),
  // Gateway shards; unset: the count Discord recommends. Several instances share them out.
  shardCount: z.number().int().positive().optional(),
  commandGuildIds: ids,
  allowedGuilds: ids,
  allowedChannels: ids,
  allowedUsers: ids,
  respondToBots: z.boolean().default(false),
});

/** Slack (Bolt). */
export const SlackConfigSchema = z.strictObject({
  botToken: z.string().optional(),
  appToken: z.string().optional(),
  signingSecret: z.string().optional(),
  apiUrl: httpUrl().optional(),
  mode: z.enum(['socket', 'http']).default('socket'),
  port: z.number().int().min(0).max(65_535).default(3000),
  slashCommand: z.string().default('/pincer'),
  followThreads: z.boolean().default(true),
  // Recent unaddressed top-level messages of a channel handed to a thread that an @mention starts (0: none).
  threadContextMessages: z.number().int().min(0).max(100).default(20),
  allowedTeams: ids,
  allowedChannels: ids,
  allowedUsers: ids,
  respondToBots: z.boolean().default(false),
});

/** The whole configuration. */
export const ConfigSchema = z.strictObject({
  dataDir: z.string().default('./data'),
  storeUrl: storeUrl.optional(),
  // A store that does not answer must not hang the start forever.
  storeConnectTimeoutMs: z.number().int().min(100).default(10_000),
  // Any case: PINCER_LOG_LEVEL=DEBUG is debug.
  logLevel: z.string().trim().toLowerCase().pipe(z.enum(LOG_LEVELS)).default('info'),
  owners: z.array(platformUser).default([]),
  admins: z.array(platformUser).default([]),
  llm: LlmConfigSchema.default(LlmConfigSchema.parse({})),
  agent: AgentConfigSchema.default(AgentConfigSchema.parse({})),
  tools: ToolsConfigSchema.default(ToolsConfigSchema.parse({})),
  jobs: JobsConfigSchema.default(JobsConfigSchema.parse({})),
  routines: RoutinesConfigSchema.default(RoutinesConfigSchema.parse({})),
  mcp: McpConfigSchema.default(McpConfigSchema.parse({})),
  attachments: AttachmentsConfigSchema.default(AttachmentsConfigSchema.parse({})),
  /** Health and metrics over HTTP (SPEC section 15); off unless a port is set. */
  http: z
    .strictObject({
      /** Env: PINCER_HTTP_PORT. */
      port: z.coerce.number().int().min(1).max(65_535).optional(),
      host: z.string().default('127.0.0.1'),
    })
    .default({ host: '127.0.0.1' }),
  /** The web console and the traces of turns (SPEC section 18). */
  console: z
    .strictObject({
      /** Serves the console on the HTTP endpoint (`http.port`); off by default. */
      enabled: z.boolean().default(false),
      /** Days a turn's, job step's or routine firing's trace is kept. */
      traceDays: z.number().min(0).max(90).default(3),
    })
    .default({ enabled: false, traceDays: 3 }),
  /** Several instances on one Redis store (SPEC section 15). */
  cluster: z
    .strictObject({
      /** This instance's name. Env: PINCER_INSTANCE_ID; default host name and pid. */
      instanceId: z.string().min(1).max(128).optional(),
      /** How long a thread's lease outlives an instance that stops renewing it (it dies). */
      leaseTtlMs: z.number().int().min(1_000).max(300_000).default(10_000),
    })
    .default({ leaseTtlMs: 10_000 }),
  terminal: z
    .strictObject({ enabled: z.enum(['auto', 'on', 'off']).default('auto'), userName: z.string().default('owner') })
    .default({ enabled: 'auto', userName: 'owner' }),
  telegram: TelegramConfigSchema.default(TelegramConfigSchema.parse({})),
  discord: DiscordConfigSchema.default(DiscordConfigSchema.parse({})),
  slack: SlackConfigSchema.default(SlackConfigSchema.parse({})),
});

/** Validated configuration with every default filled in. */
export type Config = z.infer<typeof ConfigSchema>;
/** Partial configuration as written in a file or built in tests. */
export type ConfigInput = z.input<typeof ConfigSchema>;
