/**
 * The one function that turns a tool's raw output into what the model reads:
 * bounded, free of secrets, injection markers defused, wrapped as untrusted data.
 */
import { neutraliseInjection } from './injection.js';
import type { Redactor } from './secrets.js';
import { truncateText } from './truncate.js';
import { wrapToolOutput } from './wrap.js';

/** What {@link sanitizeToolOutput} needs. */
export interface SanitizeOptions {
  /** Characters of output kept (config `tools.maxOutputChars`). */
  maxChars: number;
  redactor: Redactor;
}

/**
 * Truncates first (so a 10 MB output costs no more to scan than a short one),
 * then redacts secrets, neutralises injection markers and wraps the result.
 */
export function sanitizeToolOutput(tool: string, raw: string, options: SanitizeOptions): string {
  const bounded = truncateText(raw, { maxChars: options.maxChars, transform: (window) => options.redactor.redact(window) });
  return wrapToolOutput(tool, neutraliseInjection(bounded));
}

/** Redacts and bounds a text that is not tool data (an error message) without wrapping it. */
export function sanitizeMessage(text: string, options: SanitizeOptions): string {
  return truncateText(text, { maxChars: options.maxChars, transform: (window) => options.redactor.redact(window) });
}
