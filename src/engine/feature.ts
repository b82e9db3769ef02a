/**
 * The seam where features (background jobs, routines, MCP servers) plug into
 * a running agent. The composition root builds each feature and hands it to
 * the runtime, which never imports one: a feature offers tools, chat commands
 * with their handlers, and the work it resumes when an approval it asked for
 * ends; the runtime starts it once the channels are up and stops it on
 * shutdown.
 */
import type { ParsedCommand } from '../channels/command-grammar.js';
import type { CommandSpec, InboundCommand } from '../channels/types.js';
import type { ToolSource } from '../tools/source.js';
import type { PendingApproval } from './approval-book.js';
import type { ResumeWork } from './approval-flow.js';

/** What a command answers: text for the chat, or text shown to the sender alone where the platform can. */
export type CommandReply = string | { text: string; private: boolean };

/** Who sent a command, as the runtime's authority sees them. */
export interface CommandCaller {
  /** Qualified user id (`telegram:42`). */
  userId: string;
  /** A bot owner. */
  owner: boolean;
  /** An admin of the group the command came from (false in a DM). */
  groupAdmin(): Promise<boolean>;
}

/** A chat command a feature brings, with its handler. Who may run it is checked first, from the spec's `who`. */
export interface FeatureCommand {
  spec: CommandSpec;
  run(event: InboundCommand, parsed: ParsedCommand, caller: CommandCaller): Promise<CommandReply>;
}

/** What the runtime lends a feature once it starts. */
export interface FeatureHost {
  /** Shows an approval question (persisted and armed first); false when it could not be shown. */
  ask(approval: PendingApproval): Promise<boolean>;
  /** Ends the open question of `threadKey` (its work was cancelled), showing how it ended. */
  cancelQuestion(threadKey: string, by: string): Promise<void>;
}

/** A feature of the running agent. */
export interface Feature {
  readonly name: string;
  /** Sources of the tools the feature offers the model (registered by the composition root). */
  readonly tools?: readonly ToolSource[];
  /** Chat commands the feature brings. */
  readonly commands?: readonly FeatureCommand[];
  /** The work this feature resumes when an approval it asked for ends (approvals whose `work.kind` is `kind`). */
  readonly resumes?: { kind: string; resume: ResumeWork };
  /** Starts, once the channels are up and the approvals restored. */
  start(host: FeatureHost): Promise<void>;
  /** Stops; what is unfinished resumes at the next start. */
  stop(): Promise<void>;
}

/** What the sender of a command may see and manage of background work (jobs, routines). */
export interface Visibility {
  /** Sees more than their own: a bot owner, or an admin of this group. */
  wide: boolean;
  sees(entry: { owner: string; origin: { kind: 'dm' | 'group'; scope: string } }): boolean;
}

/**
 * Which jobs and routines the sender may see and manage here: their own; as an
 * admin of this group, those created in its scope; as a bot owner, every one.
 * Those created in a DM are private to their owner otherwise.
 */
export async function visibilityOf(event: InboundCommand, caller: CommandCaller): Promise<Visibility> {
  const groupAdmin = event.chat.kind === 'group' && (await caller.groupAdmin());
  return {
    wide: caller.owner || groupAdmin,
    sees: (entry) => entry.owner === caller.userId || caller.owner || (groupAdmin && entry.origin.kind === 'group' && entry.origin.scope === event.chat.scope),
  };
}
