/**
 * A routine (SPEC section 13): a reminder (`message`, sent as is) or a
 * `prompt` run as a background job, on a schedule, owned by the person who
 * asked, posting in the conversation it was created in. Firings are claimed
 * by a deterministic id before they run (see claims.ts). Routines are listed
 * by owner, by conversation scope and all together (see {@link IdIndex}), so
 * that one person's listing and their limit read their routines only.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ChatRecordSchema } from '../engine/history.js';
import { ToolError } from '../errors.js';
import type { Logger } from '../log.js';
import { IdIndex, LegacyIdList } from '../store/id-index.js';
import type { Namespace, Store } from '../store/store.js';
import { ScheduleSchema } from './schedule.js';
import { JobFileSchema } from '../jobs/files.js';

/** The stored routine. */
export const RoutineSchema = z.object({
  id: z.string(),
  name: z.string(),
  owner: z.string(),
  ownerName: z.string(),
  origin: ChatRecordSchema,
  schedule: ScheduleSchema,
  timezone: z.string(),
  action: z.discriminatedUnion('kind', [z.object({ kind: z.literal('message'), text: z.string() }), z.object({ kind: z.literal('prompt'), prompt: z.string() })]),
  tools: z.array(z.string()),
  /** Set when `tools` were granted without a prompt that showed them (see the job's `standing`). */
  standing: z.enum(['dm', 'group']).optional(),
  /** The files its conversation had received lately when it was scheduled: each job it starts is told of them. */
  files: z.array(JobFileSchema).optional(),
  enabled: z.boolean(),
  /** Why it was paused by pincer (a broken configuration), for its owner. */
  pausedReason: z.string().optional(),
  nextAt: z.number().optional(),
  lastAt: z.number().optional(),
  lastResult: z.string().optional(),
  /** The job its latest firing started (a prompt routine): while it runs, no other starts. */
  lastJobId: z.string().optional(),
  /** Firings that did not run: missed by more than the catch-up window, or refused (`reason`). */
  skipped: z.array(z.object({ at: z.number(), recordedAt: z.number(), reason: z.string().optional() })),
  createdAt: z.number(),
});
export type Routine = z.infer<typeof RoutineSchema>;

/** The list of every routine. */
const ALL = 'all';
/** Skipped firings kept per routine. */
const KEPT_SKIPPED = 20;

const ownerKey = (owner: string) => `owner:${owner}`;
const scopeKey = (scope: string) => `scope:${scope}`;

/** Decides whether a person with `count` routines may have one more: a reason to refuse, or undefined. */
export type RoutineCountCheck = (count: number) => string | undefined;

/** Routines in the store, listed by owner, by scope and all together. */
export class RoutineStore {
  private readonly records: Namespace<Routine>;
  private readonly ids: IdIndex;
  /** The single list of routine ids that earlier versions kept. */
  private readonly legacyIndex: LegacyIdList;

  constructor(
    store: Store,
    private readonly log: Logger,
  ) {
    this.records = store.namespace('routines', RoutineSchema, 1);
    this.ids = new IdIndex(store, 'routine-ids');
    this.legacyIndex = new LegacyIdList(store, 'routines-index');
  }

  /** A new routine's id: `r` and 8 characters. */
  static newId(): string {
    return `r${randomBytes(6).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '').padEnd(8, '0').slice(0, 8)}`;
  }

  /**
   * Stores a routine, listed before its record is written. With `check`, the
   * count of its owner's routines is checked and the routine listed in one
   * atomic step; a refusal is thrown as a ToolError with the check's reason.
   */
  async create(routine: Routine, check?: RoutineCountCheck): Promise<Routine> {
    await this.ready();
    const owner = ownerKey(routine.owner);
    // Reading the owner's list unlists ids whose record never came (a crash), so that they do not count.
    if (check) await this.ids.read(owner, (id) => this.records.get(id));
    const refusal = await this.ids.add(owner, routine.id, check && ((entries) => check(entries.length)));
    if (refusal) throw new ToolError(refusal);
    await this.ids.add(scopeKey(routine.origin.scope), routine.id);
    await this.ids.add(ALL, routine.id);
    await this.records.set(routine.id, routine);
    this.log.info({ routine: routine.id, owner: routine.owner }, 'routine created');
    return routine;
  }

  get(id: string): Promise<Routine | undefined> {
    return this.records.get(id);
  }

  async update(id: string, change: (routine: Routine) => void): Promise<Routine | undefined> {
    return this.records.update(id, (routine) => {
      if (!routine) return undefined;
      change(routine);
      if (routine.skipped.length > KEPT_SKIPPED) routine.skipped.splice(0, routine.skipped.length - KEPT_SKIPPED);
      return routine;
    });
  }

  /** Deletes the record, then unlists it (a crash in between leaves ids that readers skip and drop). */
  async delete(id: string): Promise<boolean> {
    const routine = await this.records.get(id);
    const deleted = await this.records.delete(id);
    const keys = routine ? [ownerKey(routine.owner), scopeKey(routine.origin.scope), ALL] : [ALL];
    for (const key of keys) await this.ids.remove(key, [id]);
    return deleted;
  }

  /**
   * Every routine, or only `owner`'s / those of a conversation scope, oldest
   * first; one owner's or one scope's are read from their own list.
   */
  async list(filter: { owner?: string; scope?: string } = {}): Promise<Routine[]> {
    await this.ready();
    const key = filter.owner ? ownerKey(filter.owner) : filter.scope ? scopeKey(filter.scope) : ALL;
    const listed = await this.ids.read(key, (id) => this.records.get(id));
    return listed
      .map((item) => item.record)
      .filter((routine): routine is Routine => {
        if (!routine) return false;
        if (filter.owner && routine.owner !== filter.owner) return false;
        return !filter.scope || routine.origin.scope === filter.scope;
      });
  }

  /** Adopts the single list of routine ids that earlier versions kept, once. */
  private async ready(): Promise<void> {
    const adopted = await this.legacyIndex.adoptOnce(this.ids, (id) => this.records.get(id), (routine, id) => ({
      keys: [ownerKey(routine.owner), scopeKey(routine.origin.scope), ALL],
      entry: { id, at: routine.createdAt },
    }));
    if (adopted) this.log.info({ routines: adopted }, 'routines listed by owner and scope');
  }
}
