/**
 * The approval decision: one pure function that says whether a call runs,
 * needs the user's approval, or is rejected, from the tool's requirement, the
 * admin policy of the scope, the user's permission and where the call is made.
 */
import type { ApprovalContext, ApprovalDecision, ApprovalRequirement, Permission, PolicyMode } from './types.js';

/** In an autonomous allowed set: every tool, except those that always need a person. */
export const AUTONOMOUS_WILDCARD = '*';

/**
 * Meta tools that never run in a background job, whatever its allowed set says:
 * creating jobs, changing policy or permissions, reading secrets, installing tools.
 */
export const DEFAULT_AUTONOMOUS_DENYLIST: ReadonlySet<string> = new Set([
  'create_job',
  'cancel_job',
  'job_message',
  'schedule',
  'cancel_schedule',
  'job_create',
  'job_cancel',
  'routine_create',
  'policy_set',
  'permission_set',
  'secret_list',
  'secret_read',
  'tool_install',
]);

/** Everything the decision depends on. */
export interface ApprovalInput {
  tool: string;
  /** What the tool says for these arguments. */
  requirement: ApprovalRequirement;
  /** Effective admin policy in the call's scope. */
  policy: PolicyMode;
  /** The calling user's permission for the tool. */
  permission: Permission;
  context: ApprovalContext;
}

/**
 * Decides one call.
 *
 * @example
 * decideApproval({ tool: 'shell', requirement: 'always', policy: 'allow',
 *   permission: 'askEachTime', context: { kind: 'chat', chatKind: 'dm' } });
 * // => { kind: 'ask', allowAlways: false }
 */
export function decideApproval(input: ApprovalInput): ApprovalDecision {
  if (input.policy === 'disable') return reject(`the tool "${input.tool}" is disabled by an administrator here.`);
  if (input.permission === 'disabled') return reject(`the user has disabled the tool "${input.tool}".`);
  if (input.context.kind === 'autonomous') return decideAutonomous(input, input.context);
  if (!needsApproval(input)) return { kind: 'run' };
  if (input.context.chatKind === 'group') {
    return reject(
      `"${input.tool}" needs the user's approval, which is only possible in a direct message with the bot. ` +
        'Tell the user they can ask again in a direct message, or continue without this tool.',
    );
  }
  return { kind: 'ask', allowAlways: !mustAskEachTime(input) };
}

/** What visibility depends on; the requirement is the tool's static one, when known. */
export type VisibilityInput = Omit<ApprovalInput, 'requirement'> & { requirement?: ApprovalRequirement };

/**
 * True when the tool is removed from what the model sees: disabled by policy or
 * by the user, or (in a background job) denylisted or not in the allowed set.
 */
export function isHidden(input: VisibilityInput): boolean {
  if (input.policy === 'disable' || input.permission === 'disabled') return true;
  const { context } = input;
  if (context.kind !== 'autonomous') return false;
  if (context.askOwner) return isDenylisted(input.tool, context);
  const explicitOnly = input.requirement === 'always' || input.policy === 'ask';
  return isDenylisted(input.tool, context) || !isAllowedByName(input.tool, context.allowed, !explicitOnly);
}

function needsApproval(input: ApprovalInput): boolean {
  if (mustAskEachTime(input)) return true;
  return input.requirement === 'unlessAutoApproved' && input.permission !== 'alwaysAllow';
}

/** An `always` tool or an admin `ask` policy: no one can skip the question for good. */
function mustAskEachTime(input: ApprovalInput): boolean {
  return input.requirement === 'always' || input.policy === 'ask';
}

function decideAutonomous(input: ApprovalInput, context: Extract<ApprovalContext, { kind: 'autonomous' }>): ApprovalDecision {
  if (isDenylisted(input.tool, context)) return reject(`"${input.tool}" never runs in background jobs.`);
  // Nobody is there to approve, so a tool that must always be approved runs only when named explicitly.
  const explicitOnly = mustAskEachTime(input);
  if (isAllowedByName(input.tool, context.allowed, !explicitOnly)) return { kind: 'run' };
  // Outside the allowed set: the owner may be asked, once per call.
  if (context.askOwner) return { kind: 'ask', allowAlways: false };
  if (explicitOnly && context.allowed.has(AUTONOMOUS_WILDCARD)) {
    return reject(`"${input.tool}" needs a person's approval and is not explicitly allowed in this background job.`);
  }
  return reject(`"${input.tool}" is not allowed in this background job.`);
}

function isDenylisted(tool: string, context: Extract<ApprovalContext, { kind: 'autonomous' }>): boolean {
  return DEFAULT_AUTONOMOUS_DENYLIST.has(tool) || Boolean(context.denylist?.has(tool));
}

function isAllowedByName(tool: string, allowed: ReadonlySet<string>, wildcardCounts: boolean): boolean {
  return allowed.has(tool) || (wildcardCounts && allowed.has(AUTONOMOUS_WILDCARD));
}

function reject(reason: string): ApprovalDecision {
  return { kind: 'reject', reason };
}
