/**
 * The configuration schema: the single source of truth for every key, its
 * default and its meaning. `config/pincer.example.yaml` documents the same keys.
 */
import { z } from 'zod';

const ids = z.array(z.string()).default([]);

/** Price of a model in US dollars per million tokens. */
export const PriceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
});

/** The LLM endpoint (any OpenAI-compatible Chat Completions API). */
export const LlmConfigSchema = z.object({
  baseUrl: z.url().optional(),
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
});

/** The conversation runtime and the agentic loop. */
export const AgentConfigSchema = z.object({
  name: z.string().default('pincer'),
  systemPrompt: z.string().default(''),
  maxToolIterations: z.number().int().min(1).max(100).default(10),
  maxIterations: z.number().int().min(1).max(500).default(50),
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
});

/** Built-in tools. */
export const ToolsConfigSchema = z.object({
  workspaceDir: z.string().optional(),
  maxOutputChars: z.number().int().min(1000).default(30_000),
  http: z
    .object({
      allowHosts: ids,
      maxBytes: z.number().int().positive().default(2_000_000),
      timeoutMs: z.number().int().positive().default(15_000),
    })
    .default({ allowHosts: [], maxBytes: 2_000_000, timeoutMs: 15_000 }),
  shell: z
    .object({
      enabled: z.boolean().default(false),
      timeoutMs: z.number().int().positive().default(30_000),
      maxOutputBytes: z.number().int().positive().default(200_000),
    })
    .default({ enabled: false, timeoutMs: 30_000, maxOutputBytes: 200_000 }),
});

/** Telegram (grammY). */
export const TelegramConfigSchema = z.object({
  token: z.string().optional(),
  apiRoot: z
    .url()
    .refine((url) => !url.endsWith('/'), 'must not end with a slash')
    .optional(),
  mode: z.enum(['polling', 'webhook']).default('polling'),
  webhook: z
    .object({
      url: z.url().optional(),
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
export const DiscordConfigSchema = z.object({
  token: z.string().optional(),
  apiUrl: z.url().optional(),
  commandGuildIds: ids,
  allowedGuilds: ids,
  allowedChannels: ids,
  allowedUsers: ids,
  respondToBots: z.boolean().default(false),
});

/** Slack (Bolt). */
export const SlackConfigSchema = z.object({
  botToken: z.string().optional(),
  appToken: z.string().optional(),
  signingSecret: z.string().optional(),
  apiUrl: z.url().optional(),
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
export const ConfigSchema = z.object({
  dataDir: z.string().default('./data'),
  storeUrl: z.string().optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  owners: ids,
  admins: ids,
  llm: LlmConfigSchema.default(LlmConfigSchema.parse({})),
  agent: AgentConfigSchema.default(AgentConfigSchema.parse({})),
  tools: ToolsConfigSchema.default(ToolsConfigSchema.parse({})),
  terminal: z
    .object({ enabled: z.enum(['auto', 'on', 'off']).default('auto'), userName: z.string().default('owner') })
    .default({ enabled: 'auto', userName: 'owner' }),
  telegram: TelegramConfigSchema.default(TelegramConfigSchema.parse({})),
  discord: DiscordConfigSchema.default(DiscordConfigSchema.parse({})),
  slack: SlackConfigSchema.default(SlackConfigSchema.parse({})),
});

/** Validated configuration with every default filled in. */
export type Config = z.infer<typeof ConfigSchema>;
/** Partial configuration as written in a file or built in tests. */
export type ConfigInput = z.input<typeof ConfigSchema>;
