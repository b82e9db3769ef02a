/**
 * What a user is shown when a call needs approval: the arguments (redacted,
 * bounded) and one sentence saying what the call will do.
 */
import type { Redactor } from '../../safety/secrets.js';
import type { ApprovalRequirement, CallResult, Tool } from '../types.js';
import type { Params } from './normalize.js';
import { boundText, displayJson, redactParams } from './sensitive.js';

/** Characters of arguments shown in an approval prompt. */
const DISPLAY_ARGS_CHARS = 1500;
/** Characters of the summary sentence. */
const SUMMARY_CHARS = 300;

/** The `approval` part of a `needs_approval` result. */
export function approvalRequest(tool: Tool, params: Params, typed: unknown, allowAlways: boolean, redactor: Redactor): NonNullable<CallResult['approval']> {
  return {
    allowAlways,
    displayArgs: displayJson(redactParams(params, tool.sensitiveParams), redactor, DISPLAY_ARGS_CHARS),
    summary: boundText(redactor.redact(describeCall(tool, typed)), SUMMARY_CHARS),
  };
}

/** The tool's own words for the call, or a generic sentence when it has none (or they fail). */
function describeCall(tool: Tool, typed: unknown): string {
  try {
    const text = tool.describe?.(typed);
    if (text) return text;
  } catch {
    // A describe() that fails on odd arguments must not block the prompt.
  }
  return `Run the tool "${tool.name}" with the arguments shown.`;
}

/** The tool's requirement for these (not yet validated) arguments; a tool that throws is treated as `always`. */
export function requirementFor(tool: Tool, params: Params): ApprovalRequirement {
  try {
    const parsed = tool.parameters.safeParse(params);
    return tool.requiresApproval(parsed.success ? parsed.data : params);
  } catch {
    return 'always';
  }
}
