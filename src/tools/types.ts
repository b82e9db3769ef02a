/**
 * The tool contract and the shapes the execution pipeline exchanges with the
 * agent. Tools never import channels; the agent never imports a tool's internals.
 */
import type { z } from 'zod';
import type { ChatKind } from '../chat-kind.js';
import type { ToolCall, ToolDefinition } from '../llm/types.js';
import type { Logger } from '../log.js';

export type { ChatKind } from '../chat-kind.js';

/** Whether a call needs a human's approval before it runs. */
export type ApprovalRequirement = 'never' | 'unlessAutoApproved' | 'always';

/**
 * Where a call is made from, for approvals.
 * - chat: a person is in the conversation (DM can approve, group cannot);
 * - autonomous: a background job; only `allowed` tools run, never the denylist.
 */
export type ApprovalContext =
  | { kind: 'chat'; chatKind: ChatKind }
  /**
   * A background job: `allowed` tools run without asking. With `askOwner`, a
   * call outside them that a person may approve is asked of the job's owner
   * (the job waits); without it, such a call is refused.
   */
  | {
      kind: 'autonomous';
      allowed: ReadonlySet<string>;
      denylist?: ReadonlySet<string>;
      askOwner?: boolean;
      /**
       * Set when the allowed tools were granted without a prompt that showed
       * them (the creator's standing permissions in a chat of this kind): each
       * one then runs only while its creator could still run it there without
       * being asked.
       */
      standing?: ChatKind;
    };

/** Who calls a tool, from where. */
export interface ToolContext {
  /** Platform-qualified user id, e.g. `telegram:42`. */
  userId: string;
  userName?: string;
  /** Thread key `channel:chat[:sub]`. */
  threadKey: string;
  channel: string;
  /** Policy scope of the chat (`global`, `discord:guild:1`, `telegram:chat:-100`, `slack:team:T1`). */
  scope: string;
  approval: ApprovalContext;
  /** True when the person approved this very call in a prompt (Approve pressed), not by a standing permission. */
  approvedInPrompt?: boolean;
  /**
   * The conversation whose workspace the call uses (files, memory): a turn's
   * chat, or the chat a background job was created in. Without it, a chat
   * call's comes from `threadKey` and `approval.chatKind`, and an autonomous
   * call uses its user's own workspace.
   */
  conversation?: { channel: string; chatId: string; kind: ChatKind };
  /** The conversation's outlet for files (`files_send`); absent where nothing can be sent (a background job). */
  outlet?: FileOutlet;
  signal: AbortSignal;
  log: Logger;
}

/** A file a tool sends into the conversation: its bytes as read and checked, and how it is shown. */
export interface FileToSend {
  name: string;
  bytes: Uint8Array;
  /** The type sniffed from the bytes. */
  mimeType: string;
  /** `photo`: shown as an image; `document`: a file to download. */
  as: 'photo' | 'document';
  caption?: string;
  /** Its real path, for a channel that shows where the file is instead of sending it (the terminal). */
  localPath?: string;
}

/** How a send through a {@link FileOutlet} ended. */
export type FileSendOutcome =
  /** Sent now; `before`: it had gone out already (a rerun of the turn), and was not sent again. */
  | { ok: true; before: boolean }
  /**
   * Not sent: `refused` by the platform (too big, a bad file), `failed` after
   * the retries, or `uncertain`: an attempt was cut short (a restart) after
   * which the platform may have it, so it is not sent again.
   */
  | { ok: false; reason: 'refused' | 'failed' | 'uncertain'; detail: string };

/**
 * Where a tool's file goes: the conversation the call was made in. Sends
 * deliver once under a name (the tool's key of what it sends).
 */
export interface FileOutlet {
  /** The channel's name (`telegram`), for messages. */
  channel: string;
  /** The largest photo and document the platform takes; undefined when it shows the file's path instead of sending it. */
  limits?: { photoBytes: number; documentBytes: number };
  /** The largest file read to be sent (`attachments.maxBytes`), whatever the platform takes. */
  maxBytes: number;
  /** Sends `file` once under `key` (the same key again, in this turn, sends nothing). */
  send(file: FileToSend, key: string): Promise<FileSendOutcome>;
}

/**
 * What a call that hands tools to background work (a job, a routine) grants:
 * `unattended` run without asking anyone, `asking` ask the owner each time.
 */
export interface ToolGrant {
  unattended: string[];
  asking: string[];
}

/** Per-user call limits of a tool. */
export interface ToolRateLimit {
  perMinute?: number;
  perHour?: number;
}

/** A tool the model can call. */
export interface Tool<P extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: P;
  /** True when the tool only reads: seeded as alwaysAllow for every user. */
  readOnly: boolean;
  requiresApproval(params: z.infer<P>): ApprovalRequirement;
  /** Runs the tool. Returns the text the model reads. Throw ToolError for a readable failure. */
  execute(params: z.infer<P>, ctx: ToolContext): Promise<string>;
  /** Plain words for an approval prompt: what this call will do. */
  describe?(params: z.infer<P>): string;
  /**
   * A free check of a call that needs approval, run before anyone is asked:
   * throw ToolError to refuse it outright (nobody should approve a call that
   * would be refused anyway). `execute` must still check for itself. It may
   * return the arguments to ask about and, once approved, to run with (pinned:
   * `files_send` adds the size and hash of the file the person is shown).
   */
  precheck?(params: z.infer<P>, ctx: ToolContext): Promise<void | z.infer<P>>;
  /**
   * For a tool that hands tools to background work: the tool names the call
   * grants, with `*` spelled out and duplicates removed; throws ToolError for
   * an unknown name. The pipeline shows the grant first in the approval
   * prompt, offers Always allow only when it stays within the read-only
   * tools, refuses the call in a group unless an admin allowed it there, and
   * runs an approved call with exactly the names shown.
   */
  grants?(params: z.infer<P>, ctx: ToolContext): Promise<{ tools: string[]; params: z.infer<P> }>;
  /** Parameter names whose values are redacted in prompts, logs and audit records. */
  sensitiveParams?: string[];
  /** Default 60 s. */
  timeoutMs?: number;
  /**
   * The JSON Schema offered to the model, when the tool brings its own (an MCP
   * server's); `parameters` then only checks that the arguments are an object,
   * and the tool's own side validates them.
   */
  inputSchema?: Record<string, unknown>;
  rateLimit?: ToolRateLimit;
}

/** Admin policy of a tool in one scope. `allow` follows the tool's own requirement and user permissions. */
export type PolicyMode = 'allow' | 'ask' | 'disable';

/** A user's own setting for a tool. */
export type Permission = 'alwaysAllow' | 'askEachTime' | 'disabled';

/** The approval decision for one call. */
export type ApprovalDecision =
  | { kind: 'run' }
  | { kind: 'ask'; allowAlways: boolean }
  | { kind: 'reject'; reason: string };

/** How a call ended, as the agent sees it. */
export type CallStatus = 'ok' | 'error' | 'needs_approval' | 'rejected' | 'skipped';

/** A call the pipeline ended, whatever its status, as those who count calls see it. */
export interface EndedCall {
  /** The thread the call ran for (`ToolContext.threadKey`). */
  thread: string;
  tool: string;
  status: CallStatus;
  durationMs: number;
}

/**
 * Told of every call the pipeline ends, once, in chat, in jobs, approved or
 * not (the app counts them as `tool.call` events). Errors it throws are logged.
 */
export type CallEndListener = (ended: EndedCall) => void;

/** The result of running one call through the pipeline. */
export interface CallResult {
  call: ToolCall;
  status: CallStatus;
  /** What the model reads as the tool result (empty for needs_approval). */
  content: string;
  /** Present when status is needs_approval. */
  approval?: {
    allowAlways: boolean;
    /** Arguments after normalisation, redacted, for display. */
    displayArgs: string;
    /** Plain words: what the call will do. */
    summary: string;
    /** For a call that grants tools to background work: the grant, shown first and never cut. */
    grant?: ToolGrant;
  };
  durationMs: number;
}

/** Options for one pipeline run. */
export interface RunOptions {
  /** The user approved this call: skip the approval decision. */
  approved?: boolean;
  /** Checked just before a call starts; returning a string skips the call with that result. */
  beforeStart?: (call: ToolCall) => string | undefined;
  /**
   * Hand each result back as soon as the call ends, its audit record written
   * meanwhile: the caller waits for the records with {@link ToolPipeline.audited}
   * before its next calls (a background job, whose next step is a model call away).
   */
  auditBehind?: boolean;
}

/** The execution pipeline: the one place where tool calls run. */
export interface ToolPipeline {
  /** Tools this user may see in this scope (policy- or user-disabled ones removed). */
  definitions(ctx: Pick<ToolContext, 'userId' | 'scope' | 'approval'>): Promise<ToolDefinition[]>;
  /** Runs one call through every stage. Never throws for a tool's or the model's failure. */
  run(call: ToolCall, ctx: ToolContext, options?: RunOptions): Promise<CallResult>;
  /** Runs a batch: runnable calls in parallel (bounded), results in call order. */
  runBatch(calls: ToolCall[], ctx: ToolContext, options?: RunOptions): Promise<CallResult[]>;
  /** Resolves once the audit records of the calls of thread `threadKey` that ended so far are written (see RunOptions.auditBehind). */
  audited(threadKey: string): Promise<void>;
}
