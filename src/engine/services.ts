/**
 * The services a running agent is made of, assembled once by the composition
 * root and handed to the runtime, its turns and commands, and the features.
 */
import type { Config } from '../config/schema.js';
import type { LlmProvider } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { PermissionStore } from '../tools/permissions.js';
import type { PolicyStore } from '../tools/policy.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolPipeline } from '../tools/types.js';
import type { ApprovalBook } from './approval-book.js';
import type { AgentEvents } from './events.js';
import type { ThreadHistory } from './history.js';
import type { ModelCatalog } from '../llm/models.js';
import type { Outbox } from './outbox.js';
import type { TurnJournal } from './turn-journal.js';
import type { UsageLedger } from './usage.js';
import type { CostBudget } from './budget.js';
import type { AttachmentIntake } from './attachments/intake.js';

/** Everything a turn or a command needs. */
export interface AgentServices {
  config: Config;
  log: Logger;
  /** The default model's provider. */
  provider: LlmProvider;
  /** Every model a conversation may use (`/model`), the default among them. */
  models: ModelCatalog;
  pipeline: ToolPipeline;
  registry: ToolRegistry;
  permissions: PermissionStore;
  policy: PolicyStore;
  history: ThreadHistory;
  approvals: ApprovalBook;
  usage: UsageLedger;
  /** The daily cost limit: every model call books its estimated cost here first (see metered-call.ts). */
  budget: CostBudget;
  outbox: Outbox;
  /** Threads with unfinished work, found again after a restart. */
  journal: TurnJournal;
  /** Takes in the files attached to people's messages when their turn runs. */
  attachments: AttachmentIntake;
  /** What happens, for metrics and progress displays to follow. */
  events: AgentEvents;
}
