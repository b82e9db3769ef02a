import { describe, expect, it } from 'vitest';
import { decideApproval, isHidden } from '../../src/tools/approval-rule.js';
import type { ApprovalContext, ApprovalDecision, ApprovalRequirement, Permission, PolicyMode } from '../../src/tools/types.js';

/*
 * The whole decision table: 3 requirements x 3 policies x 3 permissions x 6
 * contexts = 162 rows, written out by hand from the rules in SPEC section 6.
 *
 * R  run                      A+ ask, "always allow" offered    A- ask, no "always allow"
 * XA rejected: admin disable  XU rejected: user disabled        XG rejected: group, needs a DM
 * XN rejected: not in the background job's allowed set        XD rejected: denylisted
 * XE rejected: asks a person each time, and the job may not ask its owner
 * XS rejected: granted on standing permissions the creator no longer has
 *
 * Columns: permission alwaysAllow | askEachTime | disabled.
 */
const TABLES: Record<string, string> = {
  dm: `
    never  allow   | R  R  XU
    never  ask     | A- A- XU
    never  disable | XA XA XA
    unless allow   | R  A+ XU
    unless ask     | A- A- XU
    unless disable | XA XA XA
    always allow   | A- A- XU
    always ask     | A- A- XU
    always disable | XA XA XA`,
  group: `
    never  allow   | R  R  XU
    never  ask     | XG XG XU
    never  disable | XA XA XA
    unless allow   | R  XG XU
    unless ask     | XG XG XU
    unless disable | XA XA XA
    always allow   | XG XG XU
    always ask     | XG XG XU
    always disable | XA XA XA`,
  'autonomous, allowed by name': `
    never  allow   | R  R  XU
    never  ask     | XE XE XU
    never  disable | XA XA XA
    unless allow   | R  R  XU
    unless ask     | XE XE XU
    unless disable | XA XA XA
    always allow   | XE XE XU
    always ask     | XE XE XU
    always disable | XA XA XA`,
  'autonomous, allowed by name on standing DM permissions': `
    never  allow   | R  R  XU
    never  ask     | XE XE XU
    never  disable | XA XA XA
    unless allow   | R  XS XU
    unless ask     | XE XE XU
    unless disable | XA XA XA
    always allow   | XE XE XU
    always ask     | XE XE XU
    always disable | XA XA XA`,
  'autonomous, allowed by name, may ask its owner': `
    never  allow   | R  R  XU
    never  ask     | A- A- XU
    never  disable | XA XA XA
    unless allow   | R  R  XU
    unless ask     | A- A- XU
    unless disable | XA XA XA
    always allow   | A- A- XU
    always ask     | A- A- XU
    always disable | XA XA XA`,
  'autonomous, allowed by "*"': `
    never  allow   | XN XN XU
    never  ask     | XE XE XU
    never  disable | XA XA XA
    unless allow   | XN XN XU
    unless ask     | XE XE XU
    unless disable | XA XA XA
    always allow   | XE XE XU
    always ask     | XE XE XU
    always disable | XA XA XA`,
  'autonomous, not allowed': `
    never  allow   | XN XN XU
    never  ask     | XE XE XU
    never  disable | XA XA XA
    unless allow   | XN XN XU
    unless ask     | XE XE XU
    unless disable | XA XA XA
    always allow   | XE XE XU
    always ask     | XE XE XU
    always disable | XA XA XA`,
  'autonomous, allowed but denylisted': `
    never  allow   | XD XD XU
    never  ask     | XD XD XU
    never  disable | XA XA XA
    unless allow   | XD XD XU
    unless ask     | XD XD XU
    unless disable | XA XA XA
    always allow   | XD XD XU
    always ask     | XD XD XU
    always disable | XA XA XA`,
};

const TOOL = 'tool_x';
const CONTEXTS: Record<string, ApprovalContext> = {
  dm: { kind: 'chat', chatKind: 'dm' },
  group: { kind: 'chat', chatKind: 'group' },
  'autonomous, allowed by name': { kind: 'autonomous', allowed: new Set([TOOL]) },
  'autonomous, allowed by name on standing DM permissions': { kind: 'autonomous', allowed: new Set([TOOL]), standing: 'dm' },
  'autonomous, allowed by name, may ask its owner': { kind: 'autonomous', allowed: new Set([TOOL]), askOwner: true },
  'autonomous, allowed by "*"': { kind: 'autonomous', allowed: new Set(['*']) },
  'autonomous, not allowed': { kind: 'autonomous', allowed: new Set(['other_tool']) },
  'autonomous, allowed but denylisted': { kind: 'autonomous', allowed: new Set([TOOL, '*']), denylist: new Set([TOOL]) },
};
const REQUIREMENTS: Record<string, ApprovalRequirement> = { never: 'never', unless: 'unlessAutoApproved', always: 'always' };
const PERMISSIONS: Permission[] = ['alwaysAllow', 'askEachTime', 'disabled'];

const REASONS: Record<string, RegExp> = {
  XA: /^the tool "tool_x" is disabled by an administrator here\.$/,
  XU: /^the user has disabled the tool "tool_x"\.$/,
  XG: /^"tool_x" needs the user's approval, which is only possible in a direct message with the bot\./,
  XN: /^"tool_x" is not allowed in this background job\.$/,
  XE: /^"tool_x" needs a person's approval each time, and this background job may not ask its owner\.$/,
  XS: /^"tool_x" now needs its owner's approval, and this background job may not ask for it\.$/,
  XD: /^"tool_x" never runs in background jobs\.$/,
};

interface Row {
  context: string;
  requirement: ApprovalRequirement;
  policy: PolicyMode;
  permission: Permission;
  expected: string;
}

function rows(): Row[] {
  return Object.entries(TABLES).flatMap(([context, table]) =>
    table
      .trim()
      .split('\n')
      .flatMap((line) => {
        const [left, right] = line.split('|').map((part) => part.trim().split(/\s+/));
        const [req, policy] = left!;
        return right!.map((expected, i) => ({
          context,
          requirement: REQUIREMENTS[req!]!,
          policy: policy as PolicyMode,
          permission: PERMISSIONS[i]!,
          expected,
        }));
      }),
  );
}

function code(decision: ApprovalDecision): string {
  if (decision.kind === 'run') return 'R';
  if (decision.kind === 'ask') return decision.allowAlways ? 'A+' : 'A-';
  const match = Object.entries(REASONS).find(([, pattern]) => pattern.test(decision.reason));
  return match ? match[0] : `unknown reason: ${decision.reason}`;
}

describe('decideApproval', () => {
  const all = rows();

  it('the table covers every combination exactly once', () => {
    expect(all).toHaveLength(3 * 3 * 3 * Object.keys(CONTEXTS).length);
    const keys = new Set(all.map((r) => `${r.context}/${r.requirement}/${r.policy}/${r.permission}`));
    expect(keys.size).toBe(all.length);
  });

  it.each(all)('$context, tool says $requirement, policy $policy, user $permission -> $expected', (row) => {
    const decision = decideApproval({
      tool: TOOL,
      requirement: row.requirement,
      policy: row.policy,
      permission: row.permission,
      context: CONTEXTS[row.context]!,
    });
    expect(code(decision)).toBe(row.expected);
  });

  it('the built-in denylist applies even when a job lists the tool', () => {
    const decision = decideApproval({
      tool: 'policy_set',
      requirement: 'never',
      policy: 'allow',
      permission: 'alwaysAllow',
      context: { kind: 'autonomous', allowed: new Set(['policy_set']) },
    });
    expect(decision).toEqual({ kind: 'reject', reason: '"policy_set" never runs in background jobs.' });
  });

  it('no meta tool runs in a background job, even when the job names it: jobs, schedules, policy, permissions, secrets, installs', () => {
    const meta = ['create_job', 'cancel_job', 'job_message', 'schedule', 'cancel_schedule', 'job_create', 'job_cancel', 'routine_create', 'policy_set', 'permission_set', 'secret_list', 'secret_read', 'tool_install'];
    for (const tool of meta) {
      const context: ApprovalContext = { kind: 'autonomous', allowed: new Set([tool]), askOwner: true };
      const decision = decideApproval({ tool, requirement: 'never', policy: 'allow', permission: 'alwaysAllow', context });
      expect(decision, tool).toEqual({ kind: 'reject', reason: `"${tool}" never runs in background jobs.` });
      expect(isHidden({ tool, policy: 'allow', permission: 'alwaysAllow', context }), tool).toBe(true);
    }
  });

  it('the group rejection tells the model how the user can approve', () => {
    const decision = decideApproval({ tool: 'shell', requirement: 'always', policy: 'allow', permission: 'askEachTime', context: CONTEXTS.group! });
    expect(decision).toEqual({
      kind: 'reject',
      reason:
        '"shell" needs the user\'s approval, which is only possible in a direct message with the bot. ' +
        'Tell the user they can ask again in a direct message, or continue without this tool.',
    });
  });
});

describe('decideApproval for a call that hands tools to background work', () => {
  const grantCall = (over: Partial<Parameters<typeof decideApproval>[0]>) =>
    decideApproval({ tool: 'create_job', requirement: 'unlessAutoApproved', policy: 'allow', permission: 'askEachTime', context: CONTEXTS.dm!, grant: { beyondReadOnly: false }, ...over });

  it('in a DM, a grant beyond the read-only tools is asked every time, without Always allow, whatever the user allowed before', () => {
    expect(grantCall({ grant: { beyondReadOnly: true } })).toEqual({ kind: 'ask', allowAlways: false });
    expect(grantCall({ grant: { beyondReadOnly: true }, permission: 'alwaysAllow' })).toEqual({ kind: 'ask', allowAlways: false });
  });

  it('in a DM, a read-only grant follows the user permission as any call does', () => {
    expect(grantCall({})).toEqual({ kind: 'ask', allowAlways: true });
    expect(grantCall({ permission: 'alwaysAllow' })).toEqual({ kind: 'run' });
    expect(grantCall({ permission: 'alwaysAllow', policy: 'ask' })).toEqual({ kind: 'ask', allowAlways: false });
  });

  it('in a group, only an admin policy set for that very group opens it; a user permission or a global setting never does', () => {
    const group = { context: CONTEXTS.group! };
    expect(grantCall({ ...group, permission: 'alwaysAllow' }).kind).toBe('reject');
    expect(grantCall({ ...group, permission: 'alwaysAllow', policySource: 'global' }).kind).toBe('reject');
    expect(grantCall({ ...group, policySource: 'scope', policy: 'ask' }).kind).toBe('reject');
    expect(grantCall({ ...group, policySource: 'scope' })).toEqual({ kind: 'run' });
    // The refusal tells the model the exact command an administrator types, and the way out for the user.
    expect(grantCall({ ...group, tool: 'schedule' })).toEqual({
      kind: 'reject',
      reason:
        '"schedule" hands tools to background work, which in a group only an administrator\'s policy for this group can allow ' +
        '(/policy allow schedule). Tell the user they can ask in a direct message with the bot instead.',
    });
    expect(grantCall({ ...group, policySource: 'scope', grant: { beyondReadOnly: true } })).toEqual({ kind: 'run' });
  });
});

describe('isHidden', () => {
  const base = { tool: TOOL, policy: 'allow' as PolicyMode, permission: 'askEachTime' as Permission };

  it('hides a tool the admin disabled or the user disabled, in every context', () => {
    for (const context of Object.values(CONTEXTS)) {
      expect(isHidden({ ...base, policy: 'disable', context })).toBe(true);
      expect(isHidden({ ...base, permission: 'disabled', context })).toBe(true);
    }
  });

  it('shows allowed tools in chats and hides what a background job may not run', () => {
    expect(isHidden({ ...base, context: CONTEXTS.dm! })).toBe(false);
    expect(isHidden({ ...base, context: CONTEXTS.group! })).toBe(false);
    expect(isHidden({ ...base, context: CONTEXTS['autonomous, allowed by name']! })).toBe(false);
    expect(isHidden({ ...base, context: CONTEXTS['autonomous, not allowed']! })).toBe(true);
    expect(isHidden({ ...base, context: CONTEXTS['autonomous, allowed but denylisted']! })).toBe(true);
    // A stored "*" grants nothing: a job's tools are named one by one.
    expect(isHidden({ ...base, requirement: 'never', context: CONTEXTS['autonomous, allowed by "*"']! })).toBe(true);
    // A tool that asks each time is not offered to a job that may not ask its owner, even when named.
    expect(isHidden({ ...base, requirement: 'always', context: CONTEXTS['autonomous, allowed by name']! })).toBe(true);
    expect(isHidden({ ...base, requirement: 'always', context: CONTEXTS['autonomous, allowed by name, may ask its owner']! })).toBe(false);
    // So is a tool an admin set to ask, whatever the tool itself says.
    expect(isHidden({ ...base, requirement: 'never', policy: 'ask', context: CONTEXTS['autonomous, allowed by name']! })).toBe(true);
    expect(isHidden({ ...base, requirement: 'never', policy: 'ask', context: CONTEXTS['autonomous, allowed by name, may ask its owner']! })).toBe(false);
    expect(isHidden({ ...base, requirement: 'never', policy: 'allow', context: CONTEXTS['autonomous, allowed by name']! })).toBe(false);
  });
});
