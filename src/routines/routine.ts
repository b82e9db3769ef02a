/**
 * A routine (SPEC section 13): a reminder (`message`, sent as is) or a
 * `prompt` run as a background job, on a schedule, owned by the person who
 * asked, posting in the conversation it was created in. Firings are claimed
 * by a deterministic id (routine id and scheduled time) before they run, so
 * that no restart, retry or second instance runs one twice.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { ChatRecordSchema } from '../agent/history.js';
import type { Logger } from '../log.js';
import type { Namespace, Store } from '../store/store.js';
import { ScheduleSchema } from './schedule.js';

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
  enabled: z.boolean(),
  /** Why it was paused by pincer (a broken configuration), for its owner. */
  pausedReason: z.string().optional(),
  nextAt: z.number().optional(),
  lastAt: z.number().optional(),
  lastResult: z.string().optional(),
  /** Firings skipped because they were missed by more than the catch-up window. */
  skipped: z.array(z.object({ at: z.number(), recordedAt: z.number() })),
  createdAt: z.number(),
});
export type Routine = z.infer<typeof RoutineSchema>;

const INDEX_KEY = 'all';
/** Skipped firings kept per routine. */
const KEPT_SKIPPED = 20;
/** How long a firing's claim is kept: longer than any retry or restart could come back to it. */
const CLAIM_TTL_MS = 30 * 86_400_000;

/** The id of one firing: the same on every instance and after every restart. */
export function firingId(routineId: string, at: number): string {
  return `${routineId}_${at}`;
}

/** Claims a firing once, atomically, among every process that shares the store. */
export interface FiringClaims {
  /** True for the one caller that claimed `id` first; false for everyone after. */
  claim(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Claims within one process over the store (SQLite and Postgres run one process per store). */
export class StoreClaims implements FiringClaims {
  private readonly claims: Namespace<number>;

  constructor(store: Store) {
    this.claims = store.namespace('routine-firing', z.number(), 1);
  }

  async claim(id: string): Promise<boolean> {
    let claimed = false;
    await this.claims.update(id, (current) => {
      if (current !== undefined) return current;
      claimed = true;
      return Date.now();
    });
    return claimed;
  }

  async close(): Promise<void> {}
}

/** Claims with Redis `SET NX`, atomic across every instance on the Redis store. */
export class RedisClaims implements FiringClaims {
  private client: Redis | undefined;

  constructor(private readonly url: string) {}

  async claim(id: string): Promise<boolean> {
    if (!this.client) {
      const { Redis } = await import('ioredis');
      this.client = new Redis(this.url, { maxRetriesPerRequest: 3 });
    }
    return (await this.client.set(`pincer:routine-firing:${id}`, String(Date.now()), 'PX', CLAIM_TTL_MS, 'NX')) === 'OK';
  }

  async close(): Promise<void> {
    this.client?.disconnect();
  }
}

/** Routines in the store, with an index to list them. */
export class RoutineStore {
  private readonly records: Namespace<Routine>;
  private readonly index: Namespace<string[]>;

  constructor(
    store: Store,
    private readonly log: Logger,
  ) {
    this.records = store.namespace('routines', RoutineSchema, 1);
    this.index = store.namespace('routines-index', z.array(z.string()), 1);
  }

  /** A new routine's id: `r` and 8 characters. */
  static newId(): string {
    return `r${randomBytes(6).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '').padEnd(8, '0').slice(0, 8)}`;
  }

  async create(routine: Routine): Promise<Routine> {
    await this.records.set(routine.id, routine);
    await this.index.update(INDEX_KEY, (ids) => [...(ids ?? []), routine.id]);
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

  async delete(id: string): Promise<boolean> {
    const deleted = await this.records.delete(id);
    await this.index.update(INDEX_KEY, (ids) => (ids ?? []).filter((entry) => entry !== id));
    return deleted;
  }

  /** Every routine, or only `owner`'s / those of a conversation scope, oldest first. */
  async list(filter: { owner?: string; scope?: string } = {}): Promise<Routine[]> {
    const ids = (await this.index.get(INDEX_KEY)) ?? [];
    const routines = await Promise.all(ids.map((id) => this.records.get(id)));
    return routines.filter((routine): routine is Routine => {
      if (!routine) return false;
      if (filter.owner && routine.owner !== filter.owner) return false;
      return !filter.scope || routine.origin.scope === filter.scope;
    });
  }
}
