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

function scrub(value: unknown, secrets: string[]): unknown {
  if (typeof value === 'string') return secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), value);
  if (value instanceof Error) return { type: value.name, message: scrub(value.message, secrets) };
  if (value && typeof value === 'object') {
    try {
      return JSON.parse(scrub(JSON.stringify(value), secrets) as string);
    } catch {
      return value;
    }
  }
  return value;
}

/** A logger that writes nothing, for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: 'silent' });
