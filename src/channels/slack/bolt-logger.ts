/**
 * Bolt, the Web API client and the Socket Mode client each log through a
 * `@slack/logger` Logger; this one forwards to pincer's pino logger so that
 * their lines share its level, format and redaction.
 */
import { LogLevel, type Logger as BoltLogger } from '@slack/bolt';
import type { Logger } from '../../log.js';

/** A `@slack/logger` Logger writing to `log`. Its level follows pino's; Bolt cannot change it. */
export function boltLogger(log: Logger): BoltLogger {
  const child = log.child({ component: 'slack-sdk' });
  return {
    debug: (...args: unknown[]) => forward(child, 'debug', args),
    info: (...args: unknown[]) => forward(child, 'info', args),
    warn: (...args: unknown[]) => forward(child, 'warn', args),
    error: (...args: unknown[]) => forward(child, 'error', args),
    // Bolt sets its own default level on the logger it is given; pino's level wins.
    setLevel: () => undefined,
    getLevel: () => levelOf(child),
    setName: () => undefined,
  };
}

function forward(log: Logger, level: 'debug' | 'info' | 'warn' | 'error', args: unknown[]): void {
  if (!log.isLevelEnabled(level)) return;
  const error = args.find((arg): arg is Error => arg instanceof Error);
  const text = args
    .filter((arg) => arg !== error)
    .map((arg) => (typeof arg === 'string' ? arg : safeJson(arg)))
    .join(' ');
  if (error) log[level]({ err: error }, text || error.message);
  else log[level](text);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function levelOf(log: Logger): LogLevel {
  if (log.isLevelEnabled('debug')) return LogLevel.DEBUG;
  if (log.isLevelEnabled('info')) return LogLevel.INFO;
  if (log.isLevelEnabled('warn')) return LogLevel.WARN;
  return LogLevel.ERROR;
}
