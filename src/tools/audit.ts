/**
 * The audit trail of tool calls and policy changes, kept in the store as a ring
 * of the most recent records so it never grows without bound.
 */
import { z } from 'zod';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';

/** One tool call as it ended; `args` are redacted and bounded. */
export const CallAuditSchema = z.object({
  kind: z.literal('call'),
  tool: z.string(),
  userId: z.string(),
  threadKey: z.string(),
  args: z.string(),
  status: z.enum(['ok', 'error', 'needs_approval', 'rejected', 'skipped']),
  durationMs: z.number(),
  at: z.number(),
});

/** One change of admin policy: who set what, where, when. */
export const PolicyAuditSchema = z.object({
  kind: z.literal('policy'),
  tool: z.string(),
  scope: z.string(),
  mode: z.enum(['allow', 'ask', 'disable', 'reset']),
  by: z.string(),
  at: z.number(),
});

/** A stored audit record. */
export const AuditRecordSchema = z.discriminatedUnion('kind', [CallAuditSchema, PolicyAuditSchema]);

/** A stored audit record. */
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/** Appends and reads audit records. */
export interface AuditLog {
  /** Stores a record. Resolves once written; a failed write is logged, never thrown. */
  record(entry: AuditRecord): Promise<void>;
  /** The newest records first, at most `limit`. */
  recent(limit?: number): Promise<AuditRecord[]>;
}

/** Options for {@link createAuditLog}. */
export interface AuditLogOptions {
  /** Batches of records kept (at least this many records); older ones are overwritten. Default 5000. */
  capacity?: number;
  log: Logger;
}

const CursorSchema = z.object({ next: z.number().int().nonnegative() });

/**
 * Creates the audit log over `store`. Records arriving together are written as
 * one batch in one slot of the ring, with one cursor update: a busy bot writes
 * its audit trail in a few writes, not one read-modify-write per tool call.
 */
export function createAuditLog(store: Store, options: AuditLogOptions): AuditLog {
  const capacity = options.capacity ?? 5000;
  const slots = store.namespace('tool-audit', z.array(AuditRecordSchema), 2);
  const cursor = store.namespace('tool-audit-cursor', CursorSchema);
  let pending: { entry: AuditRecord; done: () => void }[] = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (pending.length) {
      const batch = pending;
      pending = [];
      try {
        const after = await cursor.update('ring', (current) => ({ next: (current?.next ?? 0) + 1 }));
        await slots.set(String(((after?.next ?? 1) - 1) % capacity), batch.map((item) => item.entry));
      } catch (error) {
        options.log.error({ err: error, records: batch.length }, 'audit records not written');
      }
      for (const item of batch) item.done();
    }
    flushing = undefined;
  };
  return {
    record(entry) {
      return new Promise<void>((done) => {
        pending.push({ entry, done });
        flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
      });
    },
    async recent(limit = 50) {
      const total = (await cursor.get('ring'))?.next ?? 0;
      const records: AuditRecord[] = [];
      for (let slot = total - 1; slot >= Math.max(0, total - capacity) && records.length < limit; slot--) {
        const batch = (await slots.get(String(slot % capacity))) ?? [];
        records.push(...[...batch].reverse());
      }
      return records.slice(0, limit);
    },
  };
}
