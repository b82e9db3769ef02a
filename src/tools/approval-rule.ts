/**
 * The approval decision: one pure function that says whether a call runs,
 * needs the user's approval, or is rejected, from the tool's requirement, the
 * admin policy of the scope, the user's permission and where the call is made.
 */
import type { ApprovalContext, ApprovalDecision, ApprovalRequirement, ChatKind, Permission, PolicyMode } from './types.js';

/**
 * A wildcard in an allowed set. It grants nothing by itself: the job and
 * routine tools spell it out into the tools' names before anyone approves,
 * and a stored `*` (written by older versions) matches no tool, so its job
 * asks for each call instead of running whatever exists.
 */
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
  /** Where the policy comes from: an admin's setting for this very scope, the global one, or none. */
  policySource?: 'scope' | 'global' | 'default';
  /**
   * Present when the call hands tools to background work (a job, a routine);
   * `beyondReadOnly` when it would let more than the read-only tools run unattended.
   */
  grant?: { beyondReadOnly: boolean };
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
  if (input.grant) return decideGrant(input, input.grant, input.context.chatKind);
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
  if (isDenylisted(input.tool, context)) return true;
  if (context.askOwner) return false;
  const explicitOnly = input.requirement === 'always' || input.policy === 'ask';
  return explicitOnly || !context.allowed.has(input.tool);
}

/**
 * A call that hands tools to background work. In a group nobody can be asked
 * and a person's own permission proves nothing about the group, so only an
 * admin's policy for that group opens it. In a DM, a grant beyond the
 * read-only tools is asked every time: one Always allow must not make every
 * later job self-approving.
 */
function decideGrant(input: ApprovalInput, grant: { beyondReadOnly: boolean }, chatKind: ChatKind): ApprovalDecision {
  if (chatKind === 'group') {
    if (input.policy === 'allow' && input.policySource === 'scope') return { kind: 'run' };
    return reject(
      `"${input.tool}" hands tools to background work, which in a group only an administrator's policy for this group can allow ` +
        `(/policy allow ${input.tool}). Tell the user they can ask in a direct message with the bot instead.`,
    );
  }
  if (mustAskEachTime(input) || grant.beyondReadOnly) return { kind: 'ask', allowAlways: false };
  return needsApproval(input) ? { kind: 'ask', allowAlways: true } : { kind: 'run' };
}

function needsApproval(input: ApprovalInput): boolean {
  if (mustAskEachTime(input)) return true;
  return input.requirement === 'unlessAutoApproved' && input.permission !== 'alwaysAllow';
}

/** An `always` tool or an admin `ask` policy: no one can skip the question for good. */
function mustAskEachTime(input: ApprovalInput): boolean {
  return input.requirement === 'always' || input.policy === 'ask';
}

/**
 * A call in a background job. Nobody watches, so only the tools granted by
 * name run, and only while they still could: a tool that must be asked every
 * time (`always`, or an admin's `ask`) never runs unattended, and a tool
 * granted by the creator's standing permissions stops running unattended as
 * soon as the creator would be asked for it. Anything else asks the owner
 * (when the job may) or is refused.
 */
function decideAutonomous(input: ApprovalInput, context: Extract<ApprovalContext, { kind: 'autonomous' }>): ApprovalDecision {
  if (isDenylisted(input.tool, context)) return reject(`"${input.tool}" never runs in background jobs.`);
  const granted = context.allowed.has(input.tool) && !mustAskEachTime(input) && !(context.standing && needsApproval(input));
  if (granted) return { kind: 'run' };
  if (context.askOwner) return { kind: 'ask', allowAlways: false };
  if (mustAskEachTime(input)) return reject(`"${input.tool}" needs a person's approval each time, and this background job may not ask its owner.`);
  if (context.allowed.has(input.tool)) return reject(`"${input.tool}" now needs its owner's approval, and this background job may not ask for it.`);
  return reject(`"${input.tool}" is not allowed in this background job.`);
}

function isDenylisted(tool: string, context: Extract<ApprovalContext, { kind: 'autonomous' }>): boolean {
  return DEFAULT_AUTONOMOUS_DENYLIST.has(tool) || Boolean(context.denylist?.has(tool));
}

function reject(reason: string): ApprovalDecision {
  return { kind: 'reject', reason };
}
