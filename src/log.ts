/**
 * Logging through pino: JSON when stdout is not a terminal, pretty when it is.
 * Credentials are redacted by key name and by value.
 */
import { destination, pino, type DestinationStream, type Logger } from 'pino';

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

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  level?: string;
  pretty?: boolean;
  /** Extra strings (the configured credentials) scrubbed from every message. */
  secrets?: string[];
  destination?: NodeJS.WritableStream;
}

/** Creates the process logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = (options.secrets ?? []).filter((secret) => secret.length >= 6);
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const base = {
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    ...(secrets.length
      ? {
          hooks: {
            logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void) {
              method.apply(this, args.map((arg) => scrub(arg, secrets)));
            },
          },
        }
      : {}),
  };
  if (options.destination) return pino(base, options.destination as DestinationStream);
  if (pretty) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, destination: 2 } } });
  }
  return pino(base, destination(2));
}

/** A copy of a log argument with every configured secret replaced; errors keep their message and stack. */
function scrub(value: unknown, secrets: string[], depth = 0): unknown {
  if (typeof value === 'string') return secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const fields = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, secrets, depth + 1)]));
    return { ...fields, type: value.name, message: scrub(value.message, secrets), stack: scrub(value.stack ?? '', secrets) };
  }
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, secrets, depth + 1)]));
}

/** A logger that writes nothing, for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: 'silent' });
