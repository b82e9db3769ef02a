/**
 * The execution pipeline: the one place where tool calls run. Each call goes
 * through these stages, in order, and every failure becomes a result the model
 * can read, never an exception:
 *
 *   find the tool -> normalise arguments -> approval decision -> rate limit ->
 *   before-tool hooks -> validation -> execute (timeout, abort) -> sanitise ->
 *   result -> audit record
 *
 * The first three stages decide whether a call may run at all (`prepare`); the
 * rest run it (`runPrepared`). A batch prepares every call, then runs the
 * runnable ones in parallel (see batch.ts).
 */
import type { ToolCall } from '../llm/types.js';
import type { Logger } from '../log.js';
import { sanitizeMessage, sanitizeToolOutput, type SanitizeOptions } from '../safety/sanitize.js';
import type { Redactor } from '../safety/secrets.js';
import type { Store } from '../store/store.js';
import { decideApproval } from './approval-rule.js';
import { createAuditLog, type AuditLog } from './audit.js';
import { runBatch } from './batch.js';
import type { PermissionStore } from './permissions.js';
import type { PolicyStore } from './policy.js';
import type { PipelineCore, PreparedCall } from './pipeline-core.js';
import type { ToolRegistry } from './registry.js';
import { approvalRequest, requirementFor } from './stages/approval-request.js';
import { executeTool, failureMessage } from './stages/execute.js';
import { runBeforeHooks, type BeforeToolHook } from './stages/hooks.js';
import { coerceParams, normalizeArguments, type Params } from './stages/normalize.js';
import { createRateLimiter, rateLimitMessage, type RateLimiter } from './stages/rate-limit.js';
import { boundText, displayJson, redactParams } from './stages/sensitive.js';
import { validateParams } from './stages/validate.js';
import type { CallEndListener, CallResult, CallStatus, RunOptions, Tool, ToolContext, ToolGrant, ToolPipeline } from './types.js';

/** Everything the pipeline works with; each piece can be replaced in tests. */
export interface ToolPipelineDeps {
  registry: ToolRegistry;
  permissions: Pick<PermissionStore, 'get' | 'of'>;
  policy: Pick<PolicyStore, 'effective' | 'entry' | 'modesIn'>;
  store: Store;
  redactor: Redactor;
  log: Logger;
  /** `agent.toolConcurrency`, `tools.maxOutputChars` and `agent.maxToolCallsPerBatch` (default 16). */
  config: { toolConcurrency: number; maxOutputChars: number; maxToolCallsPerBatch?: number };
  hooks?: BeforeToolHook[];
  /** Milliseconds clock, for durations, audit times and rate limits. */
  now?: () => number;
  /** Where audit records go; by default an audit log in `store`. */
  audit?: AuditLog;
  /** Counts calls against tools' rate limits; by default in memory (Redis when instances share one). */
  rateLimiter?: RateLimiter;
  /** Told of every call that ends, once (for metrics). */
  onCallEnd?: CallEndListener;
}

/** Characters of arguments kept in an audit record. */
const AUDIT_ARGS_CHARS = 2000;
/** Characters of an error text the model reads. */
const ERROR_CHARS = 2000;

/**
 * Creates the pipeline.
 *
 * @example
 * const pipeline = createToolPipeline({ registry, permissions, policy, store, redactor, log,
 *   config: { toolConcurrency: 4, maxOutputChars: 30_000 } });
 * const results = await pipeline.runBatch(response.toolCalls, ctx);
 */
export function createToolPipeline(deps: ToolPipelineDeps): ToolPipeline {
  const core = new CallRunner(deps);
  return {
    definitions: (viewer) => deps.registry.definitionsFor(viewer, deps),
    async run(call, ctx, options = {}) {
      const prepared = await core.prepare(call, ctx, options);
      return 'status' in prepared ? prepared : core.runPrepared(prepared, ctx, options);
    },
    runBatch: (calls, ctx, options = {}) => runBatch(core, calls, ctx, options),
    audited: (threadKey) => core.audited(threadKey),
  };
}

/** One call on its way through the stages: what the result and the audit record need. */
interface Trace {
  call: ToolCall;
  ctx: ToolContext;
  started: number;
  /** Redacted arguments for the audit record, worked out when the record is written. */
  args: () => string;
  /** The result goes back before the audit record is written (RunOptions.auditBehind). */
  auditBehind: boolean;
}

/** Calls of one batch when the configuration does not say (as `agent.maxToolCallsPerBatch`). */
const DEFAULT_MAX_CALLS_PER_BATCH = 16;

class CallRunner implements PipelineCore {
  readonly concurrency: number;
  readonly maxCalls: number;
  private readonly now: () => number;
  private readonly audit: AuditLog;
  private readonly limiter: RateLimiter;
  private readonly sanitize: SanitizeOptions;
  /** Per thread, the audit writes of calls whose results went back before them. */
  private readonly auditing = new Map<string, Set<Promise<void>>>();
  /** Audit arguments of prepared calls (see {@link preparedArgs}). */
  private readonly argsOfPrepared = new WeakMap<PreparedCall, string>();

  constructor(private readonly deps: ToolPipelineDeps) {
    this.concurrency = deps.config.toolConcurrency;
    this.maxCalls = deps.config.maxToolCallsPerBatch ?? DEFAULT_MAX_CALLS_PER_BATCH;
    this.now = deps.now ?? Date.now;
    this.audit = deps.audit ?? createAuditLog(deps.store, { log: deps.log });
    this.limiter = deps.rateLimiter ?? createRateLimiter(this.now);
    this.sanitize = { maxChars: deps.config.maxOutputChars, redactor: deps.redactor };
  }

  /** Stages 1-3: find the tool, normalise its arguments, decide on approval. */
  prepare(call: ToolCall, ctx: ToolContext, options: RunOptions): Promise<PreparedCall | CallResult> {
    const trace: Trace = { call, ctx, started: this.now(), args: () => this.rawArgs(call), auditBehind: options.auditBehind === true };
    return this.guarded(trace, async () => {
      const entry = this.deps.registry.get(call.name);
      if (!entry) return this.fail(trace, 'error', await this.unknownToolMessage(call.name, ctx));
      const normalized = normalizeArguments(call.name, call.arguments, entry.schema);
      if (!normalized.ok) return this.fail(trace, 'error', normalized.error);
      const prepared: PreparedCall = { call, entry, params: normalized.params, started: trace.started };
      return this.decide(prepared, { ...trace, args: () => this.preparedArgs(prepared) }, options.approved === true);
    });
  }

  /** Stages 4-10: rate limit, hooks, validation, execution, sanitising, result and audit. */
  runPrepared(prepared: PreparedCall, ctx: ToolContext, options: RunOptions): Promise<CallResult> {
    const { call, entry } = prepared;
    const trace: Trace = { call, ctx, started: prepared.started, args: () => this.preparedArgs(prepared), auditBehind: options.auditBehind === true };
    return this.guarded(trace, async () => {
      const refusal = await this.gate(trace, entry.tool, options);
      if (refusal) return refusal;
      const hooked = await runBeforeHooks(this.deps.hooks ?? [], call, prepared.params, ctx, entry.tool.sensitiveParams);
      if (!hooked.ok) {
        if (hooked.error) this.deps.log.warn({ err: hooked.error, tool: call.name }, 'before-tool hook failed');
        return this.fail(trace, hooked.status, hooked.content);
      }
      const params = hooked.rewritten ? coerceParams(hooked.params, entry.schema) : hooked.params;
      if (hooked.rewritten) trace.args = () => this.auditArgs(params, entry.tool);
      return this.validateAndExecute(options.approved ? { ...trace, ctx: { ...ctx, approvedInPrompt: true } } : trace, entry.tool, params);
    });
  }

  /** A call refused before any stage (beyond the batch's bound): an error result, audited. */
  refuse(call: ToolCall, ctx: ToolContext, content: string): Promise<CallResult> {
    return this.fail({ call, ctx, started: this.now(), args: () => this.rawArgs(call), auditBehind: false }, 'error', content);
  }

  /**
   * The approval decision. For a call the user already approved, only a refusal
   * still counts: an admin may have disabled the tool while the prompt was open.
   */
  private async decide(prepared: PreparedCall, trace: Trace, approved = false): Promise<PreparedCall | CallResult> {
    const { call, entry, params } = prepared;
    const { ctx } = trace;
    const [policy, permission] = await Promise.all([
      this.deps.policy.entry(call.name, ctx.scope),
      this.deps.permissions.get(ctx.userId, call.name),
    ]);
    const requirement = requirementFor(entry.tool, params);
    const granted = approved ? undefined : await this.grantOf(prepared, trace);
    if (granted && 'status' in granted) return granted;
    const decision = decideApproval({
      tool: call.name,
      requirement,
      policy: policy.mode,
      policySource: policy.source,
      permission,
      context: ctx.approval,
      ...(granted ? { grant: { beyondReadOnly: granted.grant.unattended.some((name) => !this.deps.registry.get(name)?.tool.readOnly) } } : {}),
    });
    if (decision.kind === 'reject') return this.fail(trace, 'rejected', `Error: ${decision.reason}`);
    if (decision.kind === 'run' || approved) return prepared;
    // Nobody should be asked to approve a call that cannot run.
    const validation = validateParams(call.name, entry.tool.parameters, params);
    if (!validation.ok) return this.fail(trace, 'error', validation.error);
    let pinned: Params | undefined;
    if (entry.tool.precheck) {
      try {
        pinned = ((await entry.tool.precheck(validation.params, ctx)) ?? undefined) as Params | undefined;
      } catch (error) {
        return this.fail(trace, 'rejected', failureMessage(call.name, error));
      }
    }
    if (!granted && pinned) {
      // The person is asked about the call as the precheck pinned it, and it runs as shown.
      const shown = { ...call, arguments: JSON.stringify(pinned) };
      const approval = approvalRequest(entry.tool, pinned, pinned, decision.allowAlways, this.deps.redactor);
      return this.finish({ ...trace, call: shown }, 'needs_approval', '', { approval });
    }
    if (!granted) {
      const approval = approvalRequest(entry.tool, params, validation.params, decision.allowAlways, this.deps.redactor);
      return this.finish(trace, 'needs_approval', '', { approval });
    }
    // The approved call runs with the grant as it was shown, whatever appears later.
    const shown = { ...call, arguments: JSON.stringify(granted.params) };
    const approval = approvalRequest(entry.tool, granted.params, granted.params, decision.allowAlways, this.deps.redactor);
    return this.finish({ ...trace, call: shown }, 'needs_approval', '', { approval: { ...approval, grant: granted.grant } });
  }

  /**
   * What a call that hands tools to background work grants, split into the
   * tools that will run unattended and those that will ask each time; a
   * refusal result for unknown names or invalid arguments.
   */
  private async grantOf(prepared: PreparedCall, trace: Trace): Promise<{ grant: ToolGrant; params: Params } | CallResult | undefined> {
    const { call, entry, params } = prepared;
    const { ctx } = trace;
    if (!entry.tool.grants || ctx.approval.kind !== 'chat') return undefined;
    const validation = validateParams(call.name, entry.tool.parameters, params);
    if (!validation.ok) return this.fail(trace, 'error', validation.error);
    let granted: { tools: string[]; params: Params };
    try {
      granted = (await entry.tool.grants(validation.params, ctx)) as { tools: string[]; params: Params };
    } catch (error) {
      return this.fail(trace, 'rejected', failureMessage(call.name, error));
    }
    const grant: ToolGrant = { unattended: [], asking: [] };
    for (const name of granted.tools) {
      const tool = this.deps.registry.get(name)?.tool;
      if (!tool) continue;
      const mode = await this.deps.policy.effective(name, ctx.scope);
      const asks = mode === 'ask' || requirementFor(tool, {}) === 'always';
      grant[asks ? 'asking' : 'unattended'].push(name);
    }
    return { grant, params: granted.params };
  }

  /** What stops a call right before it starts: beforeStart, a stopped turn, the rate limit. */
  private async gate(trace: Trace, tool: Tool, options: RunOptions): Promise<CallResult | undefined> {
    const { call, ctx } = trace;
    const skipped = options.beforeStart?.(call);
    if (skipped !== undefined) return this.finish(trace, 'skipped', skipped);
    if (ctx.signal.aborted) {
      return this.finish(trace, 'skipped', `Error: the call to "${call.name}" did not run because the turn was stopped.`);
    }
    if (!tool.rateLimit) return undefined;
    const limited = await this.limiter.take(`${ctx.userId}\u0000${tool.name}`, tool.rateLimit);
    return limited.ok ? undefined : this.fail(trace, 'error', rateLimitMessage(tool.name, limited));
  }

  private async validateAndExecute(trace: Trace, tool: Tool, params: Params): Promise<CallResult> {
    const validation = validateParams(tool.name, tool.parameters, params);
    if (!validation.ok) return this.fail(trace, 'error', validation.error);
    const executed = await executeTool(tool, validation.params, trace.ctx);
    if (!executed.ok) {
      if (executed.error) this.deps.log.debug({ err: executed.error, tool: tool.name }, 'tool call failed');
      return this.fail(trace, 'error', sanitizeMessage(executed.content, this.sanitize));
    }
    return this.finish(trace, 'ok', sanitizeToolOutput(tool.name, executed.output, this.sanitize));
  }

  private async unknownToolMessage(name: string, ctx: ToolContext): Promise<string> {
    const visible = await this.deps.registry.definitionsFor(ctx, this.deps);
    const names = visible.map((d) => d.name).join(', ') || 'none';
    return `Error: unknown tool ${JSON.stringify(boundText(String(name), 64))}. Available tools: ${names}.`;
  }

  /** Runs `work`; an unexpected exception becomes an error result, never a rejection. */
  private async guarded<T>(trace: Trace, work: () => Promise<T>): Promise<T | CallResult> {
    try {
      return await work();
    } catch (error) {
      this.deps.log.error({ err: error, tool: trace.call.name }, 'tool pipeline failure');
      return this.fail(trace, 'error', `Error: "${trace.call.name}" could not be run because of an internal problem.`);
    }
  }

  private fail(trace: Trace, status: CallStatus, content: string): Promise<CallResult> {
    return this.finish(trace, status, boundText(this.deps.redactor.redact(content), ERROR_CHARS));
  }

  /** Resolves once the audit records of `threadKey`'s calls that ended so far are written. */
  async audited(threadKey: string): Promise<void> {
    const writes = this.auditing.get(threadKey);
    if (writes) await Promise.all([...writes]);
  }

  /**
   * Builds the result, writes its audit record and tells `onCallEnd` before
   * handing it back; with `auditBehind`, hands it back while the record is
   * written (see {@link audited}).
   */
  private async finish(trace: Trace, status: CallStatus, content: string, extra?: Partial<CallResult>): Promise<CallResult> {
    const { call, ctx, started } = trace;
    const durationMs = Math.max(0, this.now() - started);
    const record = { kind: 'call', tool: call.name, userId: ctx.userId, threadKey: ctx.threadKey, args: trace.args(), status, durationMs, at: this.now() } as const;
    const written = this.audit.record(record).catch((error: unknown) => {
      // A lost audit record must not turn a finished call into a failure.
      this.deps.log.error({ err: error, tool: call.name }, 'audit record not written');
    });
    if (trace.auditBehind) this.writeBehind(ctx.threadKey, written);
    else await written;
    try {
      this.deps.onCallEnd?.({ thread: ctx.threadKey, tool: call.name, status, durationMs });
    } catch (error) {
      this.deps.log.error({ err: error, tool: call.name }, 'a listener of ended tool calls failed');
    }
    return { call, status, content, durationMs, ...extra };
  }

  private writeBehind(threadKey: string, written: Promise<void>): void {
    const writes = this.auditing.get(threadKey) ?? new Set<Promise<void>>();
    this.auditing.set(threadKey, writes);
    writes.add(written);
    void written.then(() => {
      writes.delete(written);
      if (!writes.size && this.auditing.get(threadKey) === writes) this.auditing.delete(threadKey);
    });
  }

  /** A prepared call's audit arguments, worked out once for both of its phases. */
  private preparedArgs(prepared: PreparedCall): string {
    let args = this.argsOfPrepared.get(prepared);
    if (args === undefined) {
      args = this.auditArgs(prepared.params, prepared.entry.tool);
      this.argsOfPrepared.set(prepared, args);
    }
    return args;
  }

  private auditArgs(params: Params, tool: Tool): string {
    return displayJson(redactParams(params, tool.sensitiveParams), this.deps.redactor, AUDIT_ARGS_CHARS, false);
  }

  private rawArgs(call: ToolCall): string {
    const raw = String(call.arguments ?? '').slice(0, AUDIT_ARGS_CHARS * 2);
    return boundText(this.deps.redactor.redact(raw), AUDIT_ARGS_CHARS);
  }
}
