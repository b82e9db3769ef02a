/**
 * What a setup check comes to, and the small helpers every check uses: the
 * result lines, the time limits, and a failure's reason in plain words.
 */
import { APIConnectionTimeoutError } from 'openai';

/** How a check ended. `warn` is worth reading but does not fail the run. */
export type CheckStatus = 'pass' | 'fail' | 'skip' | 'warn';

/** One line of the checklist. */
export interface CheckResult {
  /** What was checked, e.g. `model endpoint`, `telegram token`. */
  name: string;
  status: CheckStatus;
  /** What was found (for a skip: why it was not run). */
  detail?: string;
  /** For a failure or warning: what to do about it, in plain words. */
  fix?: string;
}

/** Limits of the checks: a setup check must answer quickly or be reported as silent. */
export const DEFAULT_CHECK_OPTIONS = {
  /** Each HTTP request to a platform or the model list. */
  requestTimeoutMs: 10_000,
  /** The tool-call completion (a model may think for a while). */
  completionTimeoutMs: 60_000,
} as const;

/** A check that passed. */
export const pass = (name: string, detail?: string): CheckResult => ({ name, status: 'pass', ...(detail ? { detail } : {}) });
/** A check that failed, and what to do about it. */
export const fail = (name: string, detail: string, fix?: string): CheckResult => ({ name, status: 'fail', detail, ...(fix ? { fix } : {}) });
/** A check that was not run, and why. */
export const skip = (name: string, detail: string): CheckResult => ({ name, status: 'skip', detail });

/** Why a connection failed, in words: `connection refused`, `host not found`, `no answer in 10 s`. */
export function networkReason(error: unknown): string {
  const seen = new Set<unknown>();
  // `fetch failed` and `Connection error.` say nothing; the innermost cause says why.
  let innermost = messageOf(error);
  for (let cause: unknown = error; cause && !seen.has(cause); cause = (cause as { cause?: unknown }).cause) {
    seen.add(cause);
    innermost = messageOf(cause);
    const { code, name } = cause as { code?: string; name?: string };
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
    if (code === 'ECONNRESET') return 'connection reset';
    if (name === 'TimeoutError' || code === 'ETIMEDOUT' || cause instanceof APIConnectionTimeoutError) {
      return `no answer in ${DEFAULT_CHECK_OPTIONS.requestTimeoutMs / 1000} s`;
    }
  }
  return innermost;
}

/** "1 model", "3 models". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

