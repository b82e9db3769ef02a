/**
 * `pincer start` (the default command): load the configuration, build the
 * app, start it, and shut it down gracefully on SIGINT/SIGTERM, /shutdown, or
 * when every channel ends.
 */
import { configuredChannels, configuredSecrets, createApp, type App, type ChannelFactory } from '../app.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError, StoreError } from '../errors.js';
import { createLogger, openLogFile, type Logger } from '../log.js';
import { loadSdk } from '../llm/sdk.js';
import { createRedactor, type Redactor } from '../safety/secrets.js';
import { Store } from '../store/store.js';
import { leftoverWorkspaceNotice } from '../tools/builtin/index.js';
import type { TerminalChannel } from '../channels/terminal/adapter.js';
import { channelAccess, closeChannelFix, openChannelText } from './open-channels.js';

/** What to set to get going, printed when nothing is configured. */
export const SETUP_HELP = `pincer needs a language model and at least one channel.

Language model (any OpenAI-compatible endpoint):
  OPENAI_API_KEY     API key (not needed by most local servers)
  OPENAI_BASE_URL    endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama (default: OpenAI)
  PINCER_MODEL       model name, e.g. gpt-4o-mini or llama3.1

Channels (a channel starts when its token is set):
  TELEGRAM_BOT_TOKEN, TELEGRAM_API_ROOT
  DISCORD_BOT_TOKEN, DISCORD_API_URL
  SLACK_BOT_TOKEN, SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode), SLACK_API_URL
  Run in a terminal to chat with the bot locally without any token.

Or run \`pincer init\` to set it up step by step, then \`pincer doctor\` to check it.

Other settings:
  PINCER_CONFIG      config file (default config/pincer.yaml when present)
  PINCER_DATA_DIR    data folder (default ./data)
  PINCER_STORE_URL   sqlite://path, redis://..., postgres://... (default SQLite in the data folder)
  PINCER_OWNERS      owners, e.g. telegram:42,discord:1234,slack:U01
  PINCER_LOG_LEVEL   log level (default info)
  PINCER_HTTP_PORT   port of /healthz, /readyz and /metrics (default off)
  PINCER_INSTANCE_ID this instance's name when several share a Redis store (default host and pid)
`;

/**
 * Signals are handled from the first moment: before the app exists a signal
 * abandons the start (a store that does not answer must not make the process
 * deaf), after that it asks the app to shut down; a second one exits at once.
 */
let startup = new AbortController();
/** Scrubs what the process prints itself (a failure's message can quote a request URL with a token in it). */
let redactor: Redactor = createRedactor([]);

/** Prints `pincer: <text>` on stderr, with every configured credential redacted. */
function say(text: string): void {
  process.stderr.write(`pincer: ${redactor.redact(text)}\n`);
}
let app: App | undefined;
/** The terminal channel, when the person at this terminal chats with the bot. */
let terminal: TerminalChannel | undefined;
let signals = 0;
function onSignal(signal: NodeJS.Signals): void {
  signals += 1;
  if (signals > 1) process.exit(130);
  if (app) void app.runtime.shutdown(signal);
  else startup.abort(new Error(`stopped by ${signal} during start-up`));
}

async function main(): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) return configFailure(error);
    throw error;
  }
  const { config } = loaded;
  redactor = createRedactor(configuredSecrets(config));
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const channels = await configuredChannels(config);
  const useTerminal = config.terminal.enabled === 'on' || (config.terminal.enabled === 'auto' && interactive);
  // What is missing to run at all comes first, before any warning about what is set.
  const missing = [
    ...(!config.llm.apiKey && !config.llm.baseUrl ? ['OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for any OpenAI-compatible server)'] : []),
    ...(!config.llm.model ? ['PINCER_MODEL (the model name)'] : []),
  ];
  if (missing.length) {
    process.stderr.write(`pincer: no language model is configured. Set ${missing.join(' and ')}.\n\n${SETUP_HELP}`);
    return 78;
  }
  if (!channels.length && !useTerminal) {
    process.stderr.write(`pincer: no channel is configured and no terminal is attached.\n\n${SETUP_HELP}`);
    return 78;
  }
  // The terminal's screen is the chat: log lines go to a file there (stderr stays free of them too).
  const logFile = useTerminal && process.stdout.isTTY ? openLogFile(config.dataDir) : undefined;
  const log = createLogger({
    level: config.logLevel,
    secrets: configuredSecrets(config),
    ...(logFile ? { destination: logFile.stream, pretty: false } : {}),
  });
  for (const warning of loaded.warnings) log.warn(warning);
  // On a terminal the log goes to a file: what the operator must know is said on the screen too.
  const warn = (fields: object, text: string) => {
    log.warn(fields, text);
    if (logFile) say(text);
  };
  for (const { channel } of channelAccess(config).filter((entry) => entry.open)) warn({ channel }, `${openChannelText(channel)}. To close it: ${closeChannelFix(channel)}.`);
  const leftovers = await leftoverWorkspaceNotice(config);
  if (leftovers) warn({ workspace: 'leftovers' }, leftovers);
  if (useTerminal) channels.push(await terminalFactory(config, interactive));
  let store: Store;
  try {
    store = await Store.open({
      url: config.storeUrl,
      dataDir: config.dataDir,
      log,
      connectTimeoutMs: config.storeConnectTimeoutMs,
      signal: startup.signal,
    });
  } catch (error) {
    if (startup.signal.aborted) return stoppedDuringStartup(log);
    if (!(error instanceof StoreError)) throw error;
    say(error.message);
    return 1;
  }
  const built = await createApp({ config, log, channels, store });
  if (startup.signal.aborted) {
    await built.stop('stopped during start-up');
    return stoppedDuringStartup(log);
  }
  app = built;
  try {
    await app.start();
  } catch (error) {
    await app.stop('start failed');
    // A signal during start-up is a request to stop, not a failure.
    if (signals > 0) return 0;
    say(`could not start: ${error instanceof Error ? error.message : String(error)} (see the log above for each channel's reason)`);
    return 1;
  }
  log.info({ model: config.llm.model, channels: channels.map((c) => c.name) }, 'pincer is running');
  // The model's SDK loads now, in the background, rather than with the first message (llm/sdk.ts).
  void loadSdk().catch(() => undefined);
  if (logFile) tell(`running with ${config.llm.model} on ${channels.map((c) => c.name).join(', ')}; logs go to ${logFile.path}`);
  const reason = await app.runtime.done;
  await app.stop(reason);
  log.info({ reason }, 'stopped');
  return 0;
}

/** One problem on one line; several as a list. */
function configFailure(error: ConfigError): number {
  const text = error.issues.length === 1 ? `invalid configuration: ${error.issues[0]!}` : error.message;
  say(text);
  return 78;
}

function stoppedDuringStartup(log: Logger): number {
  log.info({ reason: String(startup.signal.reason) }, 'stopped during start-up');
  return 0;
}

/**
 * Prints `pincer: <text>` once the bot runs: on the terminal's screen above
 * the prompt when the terminal is a channel (stderr would land in the line
 * being typed), on stderr otherwise.
 */
function tell(text: string): void {
  if (terminal) terminal.notice(`pincer: ${redactor.redact(text)}`);
  else say(text);
}

/**
 * The terminal channel over this process's streams. With a person at the
 * keyboard, quitting there (Ctrl+D, a second Ctrl+C) shuts the whole bot down,
 * whatever other channels run.
 */
async function terminalFactory(config: Config, interactive: boolean): Promise<ChannelFactory> {
  const { TerminalChannel } = await import('../channels/terminal/adapter.js');
  const onQuit = interactive ? () => void app?.runtime.shutdown('quit at the terminal') : undefined;
  return {
    name: 'terminal',
    create: (deps) => (terminal = new TerminalChannel({ input: process.stdin, output: process.stdout, userName: config.terminal.userName, onQuit }, deps)),
  };
}

/** Runs main, turning a configuration error found late (a channel's missing token) into a clear exit. */
async function run(): Promise<number> {
  try {
    return await main();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return configFailure(error);
  }
}

/**
 * Runs the bot until it stops, then ends the process with its exit code: 0
 * after a clean stop, 1 when it could not start, 78 for a configuration
 * problem. Signals are handled from the first moment.
 */
export function startBot(): void {
  startup = new AbortController();
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  run().then(
    (code) => {
      // An abandoned start may leave a connection attempt open that nothing else will close.
      if (startup.signal.aborted && !app) process.exit(code);
      process.exitCode = code;
      setTimeout(() => process.exit(code), 2_000).unref();
    },
    (error: unknown) => {
      const interactive = Boolean(process.stdout.isTTY);
      // On a terminal the reason, not a stack trace; a log collector gets the whole stack.
      say(`fatal: ${error instanceof Error ? (interactive ? error.message : (error.stack ?? error.message)) : String(error)}`);
      process.exit(1);
    },
  );
}
