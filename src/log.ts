/**
 * Logging through pino: JSON when stdout is not a terminal, pretty when it is.
 * Credentials are redacted by key name and, through the shared redactor, by
 * value: whole, cut short or encoded, and the recognised secret kinds.
 */
import { chmodSync, fchmodSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { destination, pino, type DestinationStream, type Logger } from 'pino';
import { createRedactor, type Redactor } from './safety/secrets.js';

export type { Logger } from 'pino';

/** Key names whose values never reach a log line. */
export const REDACTED_KEYS = [
  'token',
  'apiKey',
  'api_key',
  'appToken',
  'botToken',
  'signingSecret',
  'secret',
  'password',
  'authorization',
  'Authorization',
  'secretToken',
];

const REDACT_PATHS = REDACTED_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

/** The levels a log can be set to, in any case: pino's, from the most severe, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** One of {@link LOG_LEVELS}, in any case; default `info`. */
  level?: string;
  pretty?: boolean;
  /** The configured credentials, scrubbed from every message (see `createRedactor`). */
  secrets?: string[];
  destination?: NodeJS.WritableStream;
}

/** Creates the process logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const redactor = createRedactor(options.secrets ?? []);
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const base = {
    // Written in any case (PINCER_LOG_LEVEL=DEBUG); pino knows the lower-case names.
    level: (options.level ?? 'info').trim().toLowerCase(),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: {
      logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void) {
        method.apply(this, args.map((arg) => scrub(arg, redactor)));
      },
    },
  };
  if (options.destination) return pino(base, options.destination as DestinationStream);
  if (pretty) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, destination: 2 } } });
  }
  return pino(base, destination(2));
}

/** A copy of a log argument with every secret replaced; errors keep their message and stack. */
function scrub(value: unknown, redactor: Redactor, depth = 0): unknown {
  if (typeof value === 'string') return redactor.redact(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const fields = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, redactor, depth + 1)]));
    return { ...fields, type: value.name, message: redactor.redact(value.message), stack: redactor.redact(value.stack ?? '') };
  }
  if (Array.isArray(value)) return value.map((item) => scrub(item, redactor, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, redactor, depth + 1)]));
}

/** A log file opened for appending, and where it is. */
export interface LogFile {
  path: string;
  stream: NodeJS.WritableStream;
}

/** Modes of the log folder and of the files in it: log lines name users and chats. */
export const LOG_MODES = { folder: 0o700, file: 0o600 } as const;

/**
 * Opens `<dataDir>/logs/pincer.log` for appending, for when the screen is the
 * chat. The folder is made 0700 and its files 0600 at every start, also when
 * they were there before with wider modes (mkdir and open only set the mode of
 * what they create).
 */
export function openLogFile(dataDir: string): LogFile {
  const folder = join(dataDir, 'logs');
  mkdirSync(folder, { recursive: true, mode: LOG_MODES.folder });
  chmodSync(folder, LOG_MODES.folder);
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.isFile()) chmodSync(join(folder, entry.name), LOG_MODES.file);
  }
  const path = join(folder, 'pincer.log');
  const fd = openSync(path, 'a', LOG_MODES.file);
  fchmodSync(fd, LOG_MODES.file);
  return { path, stream: destination({ fd, sync: true }) as unknown as NodeJS.WritableStream };
}

/** A logger that writes nothing, for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: 'silent' });
