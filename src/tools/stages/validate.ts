/**
 * Validation of arguments against the tool's zod schema, with an error the
 * model can act on: each field and what is wrong with it.
 */
import type { z } from 'zod';
import type { Params } from './normalize.js';

/** Problems listed before "and N more". */
const MAX_ISSUES = 8;
const MAX_ISSUE_CHARS = 200;

/** The typed arguments, or the error text the model reads. */
export type ValidationOutcome = { ok: true; params: unknown } | { ok: false; error: string };

/** Validates `params` with `schema`. */
export function validateParams(tool: string, schema: z.ZodType, params: Params): ValidationOutcome {
  const parsed = schema.safeParse(params);
  if (parsed.success) return { ok: true, params: parsed.data };
  return { ok: false, error: validationMessage(tool, parsed.error.issues) };
}

/** `Error: invalid arguments for "x":` and one line per field. */
export function validationMessage(tool: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => `- ${fieldName(issue.path)}: ${issue.message}`.slice(0, MAX_ISSUE_CHARS));
  if (issues.length > MAX_ISSUES) lines.push(`- and ${issues.length - MAX_ISSUES} more problems`);
  return `Error: invalid arguments for "${tool}":\n${lines.join('\n')}`;
}

function fieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(arguments)';
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : String(part))).join('.').replace(/\.\[/g, '[');
}
